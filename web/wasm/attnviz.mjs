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
//
// Sizes and byte counts are checked before anything is allocated: a lab whose n, d or dv the library
// refuses answers every call with AV_ERR_SIZE, and a call whose buffers exceed what this build's wasm32
// memory can hold answers AV_ERR_TOO_LARGE (STATUS.ERR_TOO_LARGE) without growing memory.
//
// The variants, their knobs (keys, order, types, ranges, defaults), the status codes and the limits are
// the module's registry (av_registry_json, docs/api.md), parsed once at load into av.registry: nothing
// here lists a variant or a knob.

import { fillReadoutInfo } from './readout-info.mjs';

/**
 * The library's status codes (enum av_status in include/attnviz.h), by name without the AV_ prefix, from
 * the registry of the first module loaded: empty until then, frozen once filled (av.STATUS has them too).
 */
export const STATUS = {};
/**
 * The knobs a lab call starts from (a call's knobs override them key by key), from the registry of the
 * first module loaded: the registry's defaults, 0 for those resolved against n and d (s, landmarks, scale).
 * Empty until then, frozen once filled (av.defaultKnobs has them too).
 */
export const DEFAULT_KNOBS = {};
const REASON_NONFINITE = 7; // enum av_reason: AV_REASON_NONFINITE
const REASON_ZERO_WHERE_POSITIVE = 2; // enum av_reason: M is 0 where A > 0 (an underflow, or truly 0)
const LIMIT = { MAX_N: 0, MAX_D: 1, MAX_FEATURE_DIM: 2, STATUS_MIN: 3, STATUS_MAX: 4, SIZE_MAX: 5 }; // enum av_limit_key
const LONG_MAX = 2 ** 31 - 1; // a saturated feature dimension (long is 32 bits in wasm32)
const WASM32_BYTES = 2 ** 32;

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
  const b64 = typeof source === 'string' ? source.replace(/^data:[^,]*;base64,/, '') : null;
  if (b64 !== null && b64.startsWith('AGFzbQ')) { // base64 of "\0asm" (alone, or a data: URL's)
    const bin = atob(b64);
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

/** The maximum of the memory a module defines (bytes, from its memory section), or null when unknown. */
function declaredMemoryMax(bytes) {
  if (!(bytes instanceof ArrayBuffer || ArrayBuffer.isView(bytes))) return null;
  const b = bytes instanceof ArrayBuffer ? new Uint8Array(bytes) : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let i = 8; // past the magic and the version
  const leb = () => {
    let r = 0, shift = 0, c;
    do { c = b[i++]; r += (c & 0x7f) * 2 ** shift; shift += 7; } while (c & 0x80 && i < b.length && shift < 35);
    return r;
  };
  while (i < b.length) {
    const id = b[i++], size = leb(), end = i + size;
    if (id === 5) { // memory section: count, then limits (flags, min pages[, max pages])
      if (leb() < 1) return null;
      const flags = leb();
      leb();
      return flags & 1 && !(flags & 4) ? leb() * 65536 : null;
    }
    i = end;
  }
  return null;
}

/** The build's limits (av_limit), and the largest byte count one call may allocate. */
function readLimits(ex, memoryMax) {
  const get = (key) => ex.av_limit(key);
  const limits = {
    maxN: get(LIMIT.MAX_N), maxD: get(LIMIT.MAX_D), maxFeatureDim: get(LIMIT.MAX_FEATURE_DIM),
    statusMin: get(LIMIT.STATUS_MIN), statusMax: get(LIMIT.STATUS_MAX), sizeMax: get(LIMIT.SIZE_MAX),
  };
  limits.maxBytes = Math.min(limits.sizeMax, memoryMax ?? WASM32_BYTES, WASM32_BYTES);
  return Object.freeze(limits);
}

function deepFreeze(x) {
  if (x && typeof x === 'object' && !Object.isFrozen(x)) {
    for (const v of Object.values(x)) deepFreeze(v);
    Object.freeze(x);
  }
  return x;
}

/** A knob's default as a lab call takes it: 0 where the library resolves it against n and d. */
function knobDefault(k) {
  if (k.def_rule !== 'fixed') return k.type === 'bool' ? false : 0;
  if (k.type === 'bool') return k.def !== 0;
  if (k.type === 'enum') return k.options[k.def];
  return k.def;
}

/** Fill a module-level table from the first module's registry; later modules must agree with it. */
function fillOnce(target, values, what) {
  if (!Object.isFrozen(target)) {
    Object.assign(target, values);
    Object.freeze(target);
  } else if (JSON.stringify(target) !== JSON.stringify(values)) {
    throw new Error(`attnviz: this module's ${what} differ from those of the first module loaded`);
  }
}

/**
 * Instantiate the module.
 * @param {object} [opts]
 * @param {'auto'|boolean} [opts.simd='auto'] which build: probe, force SIMD, or force scalar
 * @param {URL|string|ArrayBuffer|Uint8Array|WebAssembly.Module} [opts.source] the module itself
 *        (overrides simd); base64 (starting 'AGFzbQ', alone or in a data: URL) works for single-file pages
 * @param {number} [opts.memoryMax] the module's declared memory maximum in bytes, for a compiled
 *        WebAssembly.Module source (whose bytes are not at hand): the `memoryMax` of the loaded module
 *        that compiled it. The loaded object carries `module` (the compiled WebAssembly.Module, which a
 *        worker can instantiate without fetching or compiling again) and `memoryMax`.
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
  const memoryMax = bytes instanceof WebAssembly.Module ? (opts.memoryMax ?? null) : declaredMemoryMax(bytes);
  const av = new Attnviz(instance.exports, usesSimd, memoryMax);
  av.module = module;
  av.memoryMax = memoryMax;
  return av;
}

// ----------------------------------------------------------------------------------------------------
// the module and its registry

const ROUTES = { fast: 0, accurate: 1 };
const RANDOM_KINDS = ['omega', 'E', 'F', 'dwc']; // enum av_random_kind

class Attnviz {
  constructor(exports, simd, memoryMax = null) {
    this.exports = exports;
    this.memory = exports.memory;
    this.simd = simd;
    /** @type {{maxN:number, maxD:number, maxFeatureDim:number, statusMin:number, statusMax:number,
     *          sizeMax:number, maxBytes:number}} the library's limits; maxBytes: the most one allocation
     *          (or one call's buffers together) can take in this build's memory */
    this.limits = readLimits(exports, memoryMax);
    const registry = JSON.parse(this.cstring(exports.av_registry_json()));
    if (registry.error) throw new Error(`attnviz: ${registry.error}`);
    /**
     * The registry (av_registry_json, docs/api.md), parsed once and frozen: {variants: [{name, label,
     * formula, source, class, causal, linear, recurrent, factors, scaled, weights, norm, eps, knobs}] in
     * enum av_variant order, knobs: [{key, flag, type, lo, hi, hi_rule, def, def_rule, zero_default, odd,
     * no_causal, minus1_zero, step, options, meaning}] in enum av_knob order from AV_KNOB_CAUSAL = 1,
     * limits, status}.
     */
    this.registry = deepFreeze(registry);
    /** @type {string[]} variant names, index = enum av_variant */
    this.variantNames = Object.freeze(registry.variants.map((v) => v.name));
    /** @type {string[]} knob keys, index + 1 = enum av_knob (AV_KNOB_VARIANT = 0 is `variant`) */
    this.knobKeys = Object.freeze(registry.knobs.map((k) => k.key));
    /** The status codes by name without the AV_ prefix (the module-level STATUS holds the same). */
    this.STATUS = Object.freeze(Object.fromEntries(Object.entries(registry.status).map(([k, v]) => [k.replace(/^AV_/, ''), v])));
    /** The knobs a lab call starts from: the registry's defaults (the variant knob's is enum value 0). */
    this.defaultKnobs = Object.freeze(Object.fromEntries([['variant', this.variantNames[0]],
      ...registry.knobs.map((k) => [k.key, knobDefault(k)])]));
    /** The softmax reference that reference() computes: the registry's variant of class 'exact'. */
    this.referenceVariant = registry.variants.find((v) => v.class === 'exact')?.name ?? null;
    fillOnce(STATUS, this.STATUS, 'status codes');
    fillOnce(DEFAULT_KNOBS, this.defaultKnobs, 'default knobs');
    fillReadoutInfo(registry.readouts); // the page's lists of readouts (web/wasm/readout-info.mjs)
    const gens = [];
    for (let g = 0; ; g++) {
      const p = exports.av_generator_name(g);
      if (!p) break;
      gens.push(this.cstring(p));
    }
    /** @type {string[]} generator names, index = enum av_generator */
    this.generatorNames = gens;
  }


  /** The registry's row of a variant (by name or enum value); a RangeError for an unknown one. */
  variant(name) { return this.registry.variants[this.variantId(name)]; }

  /**
   * Whether these knobs give the softmax reference itself: softmax with no decay (γ = 1; 0 means 1) and
   * no window. A decayed or windowed softmax is compared with plain softmax like any variant (the CLI's rule).
   */
  isPlainSoftmax(knobs) {
    const { decay = 0, window = 0 } = knobs;
    return this.variant(knobs.variant ?? this.defaultKnobs.variant).class === 'exact' && (decay === 0 || decay === 1) && !(window > 0);
  }

  /**
   * The feature dimension (av_feature_dim) of these knobs at sizes n, d, without a lab: {status, message,
   * r, saturated}. r is set when status is AV_OK or AV_ERR_FEATURE_DIM (r > the cap), else null; saturated:
   * r is the library's saturated value (the true dimension is at least r).
   */
  featureDim(knobs, n, d) { return this.dims(knobs, n, d, false); }
  /** The rank bound of the factors (av_factor_rank) at sizes n, d, without a lab: as featureDim. */
  factorRank(knobs, n, d) { return this.dims(knobs, n, d, true); }
  /** The structural ceiling of the semiseparable rank (av_semiseparable_ceiling) at sizes n, d: {status, r}. */
  semiseparableCeiling(knobs, n, d) {
    const lab = new Lab(this, n, d, d, false);
    try { return lab.semiseparableCeiling(knobs); } finally { lab.free(); }
  }
  /**
   * Memory collisions (av_recall_pairs, docs/mechanisms.md): write pairs into the variant's memory in
   * order and read every key back from the final memory. opts: {pairs, d, seeds} for the protocol's draws
   * (unit keys, N(0, I) values; draw s seeded with s), or {K, V, pairs, d} for given pairs (Float32Arrays,
   * pairs×d). knobs.scale is absolute here (0 → 1). {status, message, errors: Float64Array (per pair, of
   * the last draw), perSeed: Float64Array (each draw's mean), mean, min, max}; errors null on a refusal.
   */
  recall(knobs, opts) {
    const { pairs: N, d } = opts, seeds = opts.K ? 1 : Math.max(1, opts.seeds ?? 1);
    const lab = new Lab(this, N, d, d, false);
    const failed = (r) => ({ ...r, errors: null, perSeed: null, mean: null, min: null, max: null });
    try {
      if (lab.status !== STATUS.OK) return failed(lab.result(lab.status));
      const { status, why } = lab.applyKnobs({ ...knobs, causal: true });
      if (status) return failed(lab.result(status, why));
      const ex = this.exports, bytes = ex.av_recall_work(lab.prm, N, d) >>> 0;
      if (bytes === 0) { // the reason, from a call that checks the arguments first
        const st = ex.av_recall_pairs(8, 8, 8, N, d, lab.prm, 0, 0);
        return failed(lab.result(st === STATUS.ERR_NULL ? STATUS.ERR_TOO_LARGE : st));
      }
      const got = lab.take([['rK', N * d * 4], ['rV', N * d * 4], ['err', N * 8], ['work', bytes]]);
      if (got.status !== STATUS.OK) return failed(lab.result(got.status));
      const [kp, vp, ep, w] = got.ptrs;
      const perSeed = new Float64Array(seeds);
      let worst = STATUS.OK;
      for (let s = 0; s < seeds; s++) {
        if (opts.K) { this.f32(kp, N * d).set(opts.K.subarray(0, N * d)); this.f32(vp, N * d).set(opts.V.subarray(0, N * d)); }
        else ex.av_recall_draw(kp, vp, N, d, s);
        const st = ex.av_recall_pairs(ep, kp, vp, N, d, lab.prm, w, bytes);
        if (st < 0) return failed(lab.result(st));
        worst = Math.max(worst, st);
        const e = this.f64(ep, N);
        let m = 0;
        for (let i = 0; i < N; i++) m += e[i];
        perSeed[s] = m / N;
      }
      let mean = 0, min = Infinity, max = -Infinity;
      for (const v of perSeed) { mean += v / seeds; min = Math.min(min, v); max = Math.max(max, v); }
      return { ...lab.result(worst), errors: this.f64(ep, N).slice(), perSeed, mean, min, max };
    } finally { lab.free(); }
  }

  /** The protocol's pairs for draw `seed` (av_recall_draw): {K, V} Float32Arrays, pairs×d. */
  recallDraw(pairs, d, seed = 0) {
    const kp = this.malloc(pairs * d * 4), vp = this.malloc(pairs * d * 4);
    try {
      const st = this.exports.av_recall_draw(kp, vp, pairs, d, seed >>> 0);
      if (st) throw new RangeError(`attnviz: recallDraw: ${this.statusString(st)}`);
      return { K: this.f32(kp, pairs * d).slice(), V: this.f32(vp, pairs * d).slice() };
    } finally { this.free(kp); this.free(vp); }
  }

  dims(knobs, n, d, factors) {
    const lab = new Lab(this, n, d, d, false);
    try {
      const out = lab.featureDim(knobs, factors);
      return { ...out, saturated: out.r === LONG_MAX };
    } finally { lab.free(); }
  }
  /** av_params_check of these knobs at sizes n, d: {status, message, knob} (knob: the failing key, or null). */
  checkKnobs(knobs, n, d) {
    const lab = new Lab(this, n, d, d, false);
    try {
      const { status, why } = lab.applyKnobs(knobs);
      return status ? { ...lab.result(status, why), knob: null } : lab.check();
    } finally { lab.free(); }
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

  /** `bytes` of wasm memory. Throws a RangeError (with `status`) when they do not fit or are not there. */
  malloc(bytes) {
    if (!(Number.isInteger(bytes) && bytes >= 0)) {
      throw Object.assign(new RangeError(`attnviz: cannot allocate ${bytes} bytes`), { status: STATUS.ERR_SIZE });
    }
    if (bytes > this.limits.maxBytes) { // never passed on: wasm would take the count modulo 2³²
      throw Object.assign(new RangeError(`attnviz: ${bytes} bytes: ${this.statusString(STATUS.ERR_TOO_LARGE)}`),
        { status: STATUS.ERR_TOO_LARGE });
    }
    const p = this.exports.malloc(Math.max(8, bytes)) >>> 0; // an address, unsigned
    if (!p) {
      throw Object.assign(new RangeError(`attnviz: out of wasm memory allocating ${bytes} bytes`),
        { status: STATUS.ERR_NOMEM });
    }
    return p;
  }
  free(p) { if (p) this.exports.free(p); }
  f32(ptr, len) { return new Float32Array(this.memory.buffer, ptr, len); }
  f64(ptr, len) { return new Float64Array(this.memory.buffer, ptr, len); }
  i32(ptr, len) { return new Int32Array(this.memory.buffer, ptr, len); }

  variantId(name) {
    const id = typeof name === 'number' ? name : this.variantNames.indexOf(name);
    if (!Number.isInteger(id) || id < 0 || id >= this.variantNames.length) throw new RangeError(`attnviz: unknown variant "${name}"`);
    return id;
  }

  /**
   * A lab: buffers for one (n, d, dv) problem in wasm memory. Call free() when done. Sizes the library
   * refuses (not integers, below 1, above AV_MAX_N or AV_MAX_D) allocate nothing: lab.status is then
   * AV_ERR_SIZE and every call returns it.
   */
  lab(n, d, dv = d) { return new Lab(this, n, d, dv); }

  /**
   * A .npy file (float32 or float64, C order; av_npy_parse, av_npy_decode_f32): {status, message, shape,
   * data}, data a Float32Array, or null with the reader's reason (bad header, dtype, Fortran order,
   * truncated data).
   */
  npy(bytes) {
    const ex = this.exports;
    const b = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
    const buf = this.malloc(b.length), info = this.malloc(NPY_INFO_BYTES);
    let out = 0;
    try {
      new Uint8Array(this.memory.buffer, buf, b.length).set(b);
      let st = ex.av_npy_parse(info, buf, b.length);
      if (st !== STATUS.OK) return { status: st, message: this.cstring(ex.av_npy_error()), shape: null, data: null };
      const ndim = this.i32(info, 1)[0];
      const shape = Array.from(new BigInt64Array(this.memory.buffer, info + 8, ndim), Number);
      const count = shape.reduce((a, c) => a * c, 1);
      out = this.malloc(4 * Math.max(1, count));
      st = ex.av_npy_decode_f32(out, info, buf, b.length);
      if (st !== STATUS.OK) return { status: st, message: this.cstring(ex.av_npy_error()), shape: null, data: null };
      return { status: st, message: 'ok', shape, data: this.f32(out, count).slice() };
    } finally { this.free(buf); this.free(info); this.free(out); }
  }

  /**
   * A llama2.c checkpoint and its tokenizer (docs/model.md), given as two byte arrays in either order:
   * they are told apart by content (the one whose header and length make a checkpoint is the model).
   * {status, message, model}: model a Model (call free() when done), or null with the library's reason.
   */
  model(a, b) {
    const bytes = (x) => (x instanceof Uint8Array ? x : ArrayBuffer.isView(x) ? new Uint8Array(x.buffer, x.byteOffset, x.byteLength) : new Uint8Array(x));
    const first = new Model(this, bytes(a), bytes(b));
    if (first.status === STATUS.OK) return { status: STATUS.OK, message: 'ok', model: first };
    // a checkpoint in form whose weights are refused (NaN, Inf) is the checkpoint: its reason alone
    if (first.stage === 'model' && first.status !== STATUS.ERR_NONFINITE) { // a did not parse as one: the other order
      const second = new Model(this, bytes(b), bytes(a));
      if (second.status === STATUS.OK) { first.free(); return { status: STATUS.OK, message: 'ok', model: second }; }
      second.free();
      if (second.stage === 'model' && second.status !== STATUS.ERR_NONFINITE) {
        first.free();
        // the file whose header is in form is the (broken) checkpoint: its reason alone keeps the
        // sentence short (the other's "hidden_dim is 0" only says it is the tokenizer)
        const [ha, hb] = [headerInForm(bytes(a)), headerInForm(bytes(b))];
        if (ha !== hb) return { status: first.status, message: (ha ? first : second).message, model: null };
        if (!ha) return { status: first.status, message: 'neither file is a llama2.c checkpoint: neither starts with a header in form (dim, hidden_dim, layers, heads, kv heads, vocab, seq_len)', model: null };
        return { status: first.status, message: `neither file is a llama2.c checkpoint: ${first.message}; the other: ${second.message}`, model: null };
      }
      first.free();
      return { status: second.status, message: second.message, model: null };
    }
    first.free();
    return { status: first.status, message: first.message, model: null };
  }
}

const NPY_INFO_BYTES = 128;      // sizeof(av_npy_info) is 88 in wasm32: int ndim, int64_t shape[8] at offset 8, …
const MODEL_STRUCT_BYTES = 256;  // sizeof(av_model) is 92 in wasm32; sizeof(av_tokenizer) 28
const MODEL_CONFIG = ['dim', 'hiddenDim', 'layers', 'heads', 'kvHeads', 'vocab', 'seqLen', 'headSize', 'kvDim', 'sharedClassifier'];

/**
 * Whether bytes start with a llama2.c header in form: seven little-endian int32 (dim, hidden_dim,
 * n_layers, n_heads, n_kv_heads, ±vocab_size, seq_len), each 1..2^24 (a tokenizer's float scores are
 * not). Only to say which of two refused files was meant as the checkpoint; the library decides the rest.
 */
function headerInForm(b) {
  if (b.length < 28) return false;
  const v = new DataView(b.buffer, b.byteOffset, 28);
  for (let i = 0; i < 7; i++) {
    const x = Math.abs(v.getInt32(4 * i, true));
    if (!(x >= 1 && x <= 2 ** 24)) return false;
  }
  return true;
}

/**
 * A real model in wasm memory (av_model_parse, av_tokenizer_parse, av_encode, av_forward): the files are
 * copied in once; the key/value cache lives in the forward workspace. status/message say why a model
 * failed (stage: 'model' or 'tokenizer', the file that did).
 */
class Model {
  constructor(av, checkpoint, tokenizer) {
    this.av = av;
    this.ptrs = [];
    const ex = av.exports;
    const take = (bytes) => { const p = av.malloc(bytes); this.ptrs.push(p); return p; };
    const failed = (stage, st) => {
      this.stage = stage;
      this.status = st;
      const why = st === STATUS.ERR_FORMAT || st === STATUS.ERR_NONFINITE ? av.cstring(ex.av_model_error()) : av.statusString(st);
      this.message = `${stage === 'model' ? 'the checkpoint' : 'the tokenizer'}: ${why}`;
    };
    try {
      this.mbuf = take(checkpoint.length);
      new Uint8Array(av.memory.buffer, this.mbuf, checkpoint.length).set(checkpoint);
      this.mp = take(MODEL_STRUCT_BYTES);
      let st = ex.av_model_parse(this.mp, this.mbuf, checkpoint.length);
      if (st !== STATUS.OK) { failed('model', st); return; }
      const c = av.i32(this.mp, MODEL_CONFIG.length);
      /** {dim, hiddenDim, layers, heads, kvHeads, vocab, seqLen, headSize, kvDim, sharedClassifier} */
      this.config = Object.freeze(Object.fromEntries(MODEL_CONFIG.map((k, i) => [k, k === 'sharedClassifier' ? !!c[i] : c[i]])));
      this.tbuf = take(tokenizer.length);
      new Uint8Array(av.memory.buffer, this.tbuf, tokenizer.length).set(tokenizer);
      const tw = ex.av_tokenizer_work(this.config.vocab) >>> 0;
      this.tp = take(MODEL_STRUCT_BYTES);
      st = ex.av_tokenizer_parse(this.tp, this.tbuf, tokenizer.length, this.config.vocab, take(tw), tw);
      if (st !== STATUS.OK) { failed('tokenizer', st); return; }
      this.workBytes = ex.av_forward_work(this.mp) >>> 0;
      this.work = take(this.workBytes);
      this.status = STATUS.OK;
      this.message = 'ok';
    } catch (err) {
      if (!(err instanceof RangeError) || err.status === undefined) throw err;
      this.stage = this.config ? 'tokenizer' : 'model';
      this.status = err.status;
      this.message = `the ${this.stage === 'model' ? 'checkpoint' : 'tokenizer'} does not fit in memory: ${err.message}`;
    }
  }

  /**
   * llama2.c's encode of text with BOS: {status, message, ids: Int32Array}. A text too long for the
   * model's seq_len whatever the merges (more bytes than seq_len pieces of max_token_length could hold)
   * is refused before encoding: merging is quadratic in the text's length.
   */
  encode(text) {
    const av = this.av, ex = av.exports;
    const utf8 = new TextEncoder().encode(String(text));
    const maxLen = av.i32(this.tp + 4, 1)[0]; // av_tokenizer.max_token_length
    if (utf8.length > this.config.seqLen * maxLen) {
      return { status: STATUS.ERR_SIZE, message: `the text is ${utf8.length} bytes: more than the model's ${this.config.seqLen} tokens can hold`, ids: null };
    }
    const cap = utf8.length + 2;
    const tp = av.malloc(utf8.length + 1), ip = av.malloc(4 * cap), np = av.malloc(4);
    try {
      new Uint8Array(av.memory.buffer, tp, utf8.length).set(utf8);
      const st = ex.av_encode(ip, np, cap, this.tp, tp, utf8.length, 1);
      if (st !== STATUS.OK) {
        const why = st === STATUS.ERR_FORMAT ? av.cstring(ex.av_model_error()) : av.statusString(st);
        return { status: st, message: `encoding: ${why}`, ids: null };
      }
      return { status: st, message: 'ok', ids: av.i32(ip, av.i32(np, 1)[0]).slice() };
    } finally { av.free(tp); av.free(ip); av.free(np); }
  }

  /** The display text of each token (llama2.c's decode after the previous token: docs/model.md). */
  pieces(ids) {
    const av = this.av, ex = av.exports;
    const pp = av.malloc(8);
    const dec = new TextDecoder('utf-8', { fatal: false });
    try {
      return Array.from(ids, (id, i) => {
        const st = ex.av_token_piece(pp, pp + 4, this.tp, i ? ids[i - 1] : -1, id);
        if (st !== STATUS.OK) return '\ufffd';
        const [ptr, len] = av.i32(pp, 2);
        return dec.decode(new Uint8Array(av.memory.buffer, ptr >>> 0, len).slice());
      });
    } finally { av.free(pp); }
  }

  /**
   * The forward pass over ids (1 ≤ n ≤ seqLen): {status, message, n, Q (layers, heads, n, headSize),
   * K, V (layers, kvHeads, n, headSize): Float32Array copies, row-major; ms: the time it took}.
   */
  forward(ids) {
    const av = this.av, ex = av.exports, c = this.config, n = ids.length;
    if (!(n >= 1 && n <= c.seqLen)) return { status: STATUS.ERR_SIZE, message: `${n} tokens: the model takes 1..${c.seqLen} (its seq_len)` };
    const qn = c.layers * c.heads * n * c.headSize, kn = c.layers * c.kvHeads * n * c.headSize;
    const t0 = typeof performance === 'object' ? performance.now() : Date.now();
    const ip = av.malloc(4 * n), qp = av.malloc(4 * qn), kp = av.malloc(4 * kn), vp = av.malloc(4 * kn);
    try {
      av.i32(ip, n).set(ids);
      const st = ex.av_forward(qp, kp, vp, 0, this.mp, ip, 0, n, this.work, this.workBytes);
      if (st < 0) return { status: st, message: `the forward pass: ${av.statusString(st)}` };
      const ms = (typeof performance === 'object' ? performance.now() : Date.now()) - t0;
      // the weights were checked finite at load, so an overflow is a product or sum of them and the
      // activations, not the q·k or feature terms the general sentence names
      const message = st === STATUS.WARN_PRODUCT_OVERFLOW
        ? 'the forward pass: a product or sum of the weights and activations left the float32 range (Q, K, V hold Inf or NaN)'
        : st ? `the forward pass: ${av.statusString(st)}` : 'ok';
      return { status: st, message, n, Q: av.f32(qp, qn).slice(), K: av.f32(kp, kn).slice(), V: av.f32(vp, kn).slice(), ms };
    } finally { av.free(ip); av.free(qp); av.free(kp); av.free(vp); }
  }

  free() {
    for (const p of this.ptrs) this.av.free(p);
    this.ptrs = [];
  }
}

// ----------------------------------------------------------------------------------------------------
// the lab: Q, K, V, the variant's matrix M, the softmax reference A, the scores S, spectra, readouts

class Lab {
  /** inputs false: only the params (for the module's knob queries: no Q, K, V). */
  constructor(av, n, d, dv, inputs = true) {
    this.av = av;
    this.n = n; this.d = d; this.dv = dv;
    this.bufs = new Map(); // name → {ptr, bytes}
    this.rowsRead = null; // {of, causal} when the last readouts() kept its row entropies (rowEntropyHistogram)
    // the reference's summary kept by readouts({summary: key}): {key, causal, version}; version counts the
    // lab's own writes of A and V (reference(), generate()), which make any kept summary stale
    this.summaryKept = null;
    this.refVersion = 0;
    this.prm = 0; this.Qp = 0; this.Kp = 0; this.Vp = 0;
    /** AV_OK, or why this lab computes nothing (AV_ERR_SIZE for n, d, dv the library refuses; AV_ERR_TOO_LARGE
     *  or AV_ERR_NOMEM when Q, K, V do not fit): every call then returns this status and allocates nothing. */
    this.status = sizeStatus(av.limits, n, d, dv);
    this.base = 0; // bytes of Q, K, V
    if (this.status !== STATUS.OK) return;
    const qk = inputs ? n * d * 4 : 0, vb = inputs ? n * dv * 4 : 0;
    const params = ['params', av.exports.av_params_size() >>> 0];
    const got = this.take(inputs ? [['Q', qk], ['K', qk], ['V', vb], params] : [params]);
    if (got.status !== STATUS.OK) { this.status = got.status; return; }
    if (inputs) [this.Qp, this.Kp, this.Vp, this.prm] = got.ptrs;
    else [this.prm] = got.ptrs;
    this.bufs.delete('params'); // freed by free() as prm, not a named buffer
    this.base = 2 * qk + vb;
  }

  /** A named buffer of at least `bytes` bytes (grown, never shrunk). Returns its pointer; throws a
   *  RangeError with `status` (AV_ERR_TOO_LARGE, AV_ERR_NOMEM) when it cannot be had. */
  buf(name, bytes) {
    const b = this.bufs.get(name);
    if (b && b.bytes >= bytes) return b.ptr;
    if (b) { this.av.free(b.ptr); this.bufs.delete(name); } // on a failure below, no entry points at freed memory
    const ptr = this.av.malloc(bytes);
    this.bufs.set(name, { ptr, bytes });
    return ptr;
  }
  has(name) { return this.bufs.has(name); }

  /**
   * The buffers one call needs ([name, bytes] pairs), checked together against what this build's memory
   * can hold before any is allocated: {status: AV_OK, ptrs}, or {status: AV_ERR_TOO_LARGE | AV_ERR_NOMEM}
   * with none of the named buffers left behind (a half-grown one would hold garbage).
   */
  take(specs) {
    let total = this.base;
    for (const [, bytes] of specs) {
      if (!(Number.isInteger(bytes) && bytes >= 0)) return { status: STATUS.ERR_TOO_LARGE };
      total += bytes;
    }
    if (total > this.av.limits.maxBytes) return { status: STATUS.ERR_TOO_LARGE };
    const ptrs = [];
    try {
      for (const [name, bytes] of specs) ptrs.push(this.buf(name, bytes));
    } catch (err) {
      if (!(err instanceof RangeError) || err.status === undefined) throw err;
      for (const [name] of specs) this.drop(name);
      return { status: err.status };
    }
    return { status: STATUS.OK, ptrs };
  }
  drop(name) {
    const b = this.bufs.get(name);
    if (b) { this.av.free(b.ptr); this.bufs.delete(name); }
  }

  get Q() { return this.Qp ? this.av.f32(this.Qp, this.n * this.d) : new Float32Array(0); }
  get K() { return this.Kp ? this.av.f32(this.Kp, this.n * this.d) : new Float32Array(0); }
  get V() { return this.Vp ? this.av.f32(this.Vp, this.n * this.dv) : new Float32Array(0); }
  /** The variant's matrix from the last matrix() call (n×n). */
  get M() { return this.view('M'); }
  /** The softmax reference from the last reference() call (n×n). */
  get A() { return this.view('A'); }
  /** The scores from the last scores() call (n×n). */
  get S() { return this.view('S'); }
  /** The output from the last attend()/linear()/recurrent()/chunkwise() call (n×dv). */
  get O() {
    if (this.status !== STATUS.OK) return new Float32Array(0);
    return this.av.f32(this.buf('O', this.n * this.dv * 4), this.n * this.dv);
  }
  view(name) {
    const b = this.bufs.get(name);
    return b ? this.av.f32(b.ptr, this.n * this.n) : null;
  }

  /** {status, message}: the library's sentence for the status, then the detail `why` when there is one. */
  result(status, why = null) {
    const sentence = this.av.statusString(status);
    return { status, message: why ? `${sentence}: ${why}` : sentence };
  }

  /** Write knobs into the wasm av_params. Unknown keys throw (URL parameters are data, not code). */
  setKnobs(knobs = {}) { return this.applyKnobs(knobs).status; }

  /** Check every knob, then write them (nothing is written when one is refused): {status, why}. */
  applyKnobs(knobs = {}) {
    if (this.status !== STATUS.OK) return { status: this.status, why: null };
    const ex = this.av.exports, d = this.d;
    const variant = this.av.variantId(knobs.variant ?? this.av.defaultKnobs.variant);
    // knobs not given take the variant's own defaults where its row has them (retention's decay), and a
    // variant that exists only causal is causal unless told otherwise (then av_params_check says why not)
    const row = this.av.registry.variants[variant];
    const k = { ...this.av.defaultKnobs, ...row.defaults, causal: row.causal_only, ...knobs };
    const values = [];
    for (const { key, type, options } of this.av.registry.knobs) { // enum av_knob order from AV_KNOB_CAUSAL
      let v = k[key];
      if (type === 'enum' && typeof v === 'string') v = options.includes(v) ? options.indexOf(v) : NaN;
      if (typeof v === 'boolean') v = v ? 1 : 0;
      if (typeof v !== 'number' || !Number.isFinite(v)) {
        return { status: STATUS.ERR_KNOB, why: `${key} = ${String(v).slice(0, 40)} is not a finite number` };
      }
      values.push(v);
    }
    const W = k.hedgehog_w;
    let cols = 0;
    if (W) {
      const numeric = Array.isArray(W) || (ArrayBuffer.isView(W) && !(W instanceof DataView) &&
        !(W instanceof BigInt64Array) && !(W instanceof BigUint64Array));
      if (!numeric) return { status: STATUS.ERR_KNOB, why: 'hedgehog_w is not an array of numbers' };
      const maxCols = Math.floor(this.av.limits.maxFeatureDim / 2);
      cols = k.hedgehog_cols ?? W.length / d;
      if (k.hedgehog_cols == null && !Number.isInteger(cols)) {
        return { status: STATUS.ERR_SIZE, why: `hedgehog_w holds ${W.length} values, not a multiple of d = ${d} (give hedgehog_cols)` };
      }
      if (!Number.isInteger(cols) || cols < 1 || cols > maxCols) {
        return { status: STATUS.ERR_KNOB, why: `hedgehog_cols = ${String(cols).slice(0, 40)} is not an integer in 1…${maxCols}` };
      }
      if (W.length < d * cols) {
        return { status: STATUS.ERR_SIZE, why: `hedgehog_w holds ${W.length} values, d×cols = ${d}×${cols} = ${d * cols} needed` };
      }
    }
    let st = ex.av_params_default(this.prm, variant);
    if (st) return { status: st, why: null };
    for (let i = 0; i < values.length; i++) {
      st = ex.av_params_set(this.prm, i + 1, values[i]);
      if (st) return { status: st, why: null };
    }
    if (W) {
      const got = this.take([['W', d * cols * 4]]);
      if (got.status !== STATUS.OK) return { status: got.status, why: 'hedgehog_w' };
      const ptr = got.ptrs[0];
      this.av.f32(ptr, d * cols).set(ArrayBuffer.isView(W) ? W.subarray(0, d * cols) : W.slice(0, d * cols));
      st = ex.av_params_set_hedgehog(this.prm, ptr, cols);
    }
    return { status: st, why: null };
  }

  work(bytes) { return this.buf('work', bytes >>> 0); }
  /* The variant's own calls (its matrix into M, attend, features, the output paths, factors) run in a workspace of
   * their own, 'vwork', kept from call to call: the library keeps the random matrices a variant draws from its seed
   * there (Performer's ω, Linformer's E and F: src/internal.h's draw cache), so a knob change that keeps the seed and
   * the shapes does not redraw them. The reference, spectra and readouts use 'work', which would overwrite them. */

  /**
   * The result behind a `_work` query of 0: the library's verdict on the knobs (naming the knob that
   * failed), and AV_ERR_TOO_LARGE when they are valid (the need exceeds this build's size_t).
   */
  zeroWork() {
    const { status, message } = this.check();
    return status !== STATUS.OK ? { status, message } : this.result(STATUS.ERR_TOO_LARGE);
  }
  /**
   * av_params_check of the current knobs into scratch (the params themselves stay unresolved):
   * {status, message, knob}, knob the key of the knob that failed (a range, or the causal form), or null.
   */
  check() {
    const ex = this.av.exports;
    const got = this.take([['resolved', ex.av_params_size() >>> 0], ['bad', 8]]);
    if (got.status !== STATUS.OK) return { ...this.result(got.status), knob: null };
    const [out, bad] = got.ptrs;
    const st = ex.av_params_check(out, this.prm, this.n, this.d, bad);
    const id = this.av.i32(bad, 1)[0];
    const knob = st < 0 && id >= 1 && id <= this.av.knobKeys.length ? this.av.knobKeys[id - 1] : null;
    return { ...this.result(st, knob ? `knob ${knob}` : null), knob };
  }

  /** Fill Q, K, V from a generator ('gaussian', 'clustered', 'local', 'lowrank', 'sink'). */
  generate(gen, std = 1, seed = 1) {
    if (this.status !== STATUS.OK) return this.result(this.status);
    const id = typeof gen === 'number' ? gen : this.av.generatorNames.indexOf(gen);
    if (id < 0) return this.result(STATUS.ERR_VARIANT);
    this.refVersion += 1;
    return this.result(this.av.exports.av_generate(this.Qp, this.Kp, this.Vp, this.n, this.d, id, std, seed >>> 0));
  }

  /** An n×n matrix into buffer `name` ('M' or 'A') with the knobs in place (matrix(), reference()). */
  matrixInto(name) {
    const ex = this.av.exports, n = this.n;
    this.rowsRead = null; // the row entropies kept by readouts() belong to the matrix being replaced
    if (name === 'A') this.refVersion += 1;
    const bytes = ex.av_matrix_work(this.prm, n, this.d) >>> 0;
    if (bytes === 0) return this.zeroWork();
    const got = this.take([[name, n * n * 4], [name === 'M' ? 'vwork' : 'work', bytes]]);
    if (got.status !== STATUS.OK) return this.result(got.status);
    const [out, w] = got.ptrs;
    return this.result(ex.av_matrix(out, this.Qp, this.Kp, n, this.d, this.prm, w, bytes));
  }

  /** The variant's n×n matrix (or effective map) into M. */
  matrix(knobs) {
    const { status, why } = this.applyKnobs(knobs);
    return status ? this.result(status, why) : this.matrixInto('M');
  }

  /** The softmax reference (the registry's exact variant) on the same Q, K with the knobs' scale and
   *  causal flag, into A. */
  reference(knobs = {}) {
    const { status, why } = this.applyKnobs({ variant: this.av.referenceVariant, scale: knobs.scale ?? 0, causal: !!knobs.causal });
    return status ? this.result(status, why) : this.matrixInto('A');
  }

  /** scale·QKᵀ (applyExp false) or exp(scale·QKᵀ − max) (true), into S. */
  scores(scale = 0, applyExp = false) {
    if (this.status !== STATUS.OK) return this.result(this.status);
    const got = this.take([['S', this.n * this.n * 4]]);
    if (got.status !== STATUS.OK) return this.result(got.status);
    return this.result(this.av.exports.av_scores(got.ptrs[0], this.Qp, this.Kp, this.n, this.d, scale, applyExp ? 1 : 0));
  }

  /** Output O = M·V by the quadratic path (M is written too). */
  attend(knobs) {
    const ex = this.av.exports, n = this.n;
    const { status, why } = this.applyKnobs(knobs);
    if (status) return this.result(status, why);
    this.rowsRead = null;
    const bytes = ex.av_attend_work(this.prm, n, this.d, this.dv) >>> 0;
    if (bytes === 0) return this.zeroWork();
    const got = this.take([['M', n * n * 4], ['O', n * this.dv * 4], ['vwork', bytes]]);
    if (got.status !== STATUS.OK) return this.result(got.status);
    const [M, O, w] = got.ptrs;
    return this.result(ex.av_attend(O, M, this.Qp, this.Kp, this.Vp, n, this.d, this.dv, this.prm, w, bytes));
  }

  /**
   * The feature maps Φ_Q, Φ_K (n×r each, av_features: stabilisers included) of the variant's knobs:
   * {status, message, r, PhiQ, PhiK}: views into the module's memory (row-major n×r), valid until the lab's
   * next call (copy them to keep them), or PhiQ = PhiK = null when the variant has no feature map or they
   * could not be computed (status says why).
   */
  features(knobs) {
    const ex = this.av.exports, n = this.n;
    const fd = this.featureDim(knobs);
    const failed = (st) => ({ ...this.result(st), r: fd.r, PhiQ: null, PhiK: null });
    if (fd.status !== STATUS.OK) return failed(fd.status);
    const r = fd.r;
    const bytes = ex.av_features_work(this.prm, n, this.d) >>> 0;
    if (bytes === 0) return failed(STATUS.ERR_TOO_LARGE); // n and the knobs are valid
    const got = this.take([['PhiQ', n * r * 4], ['PhiK', n * r * 4], ['vwork', bytes]]);
    if (got.status !== STATUS.OK) return failed(got.status);
    const [pq, pk, w] = got.ptrs;
    const st = ex.av_features(pq, pk, this.Qp, this.Kp, n, this.d, this.prm, w, bytes);
    if (st < 0) return failed(st);
    return { ...this.result(st), r, PhiQ: this.av.f32(pq, n * r), PhiK: this.av.f32(pk, n * r) };
  }

  /**
   * A random matrix the variant draws from its feature seed, exactly as it uses it (av_random_matrix):
   * 'omega' (Performer's ω, m×d), 'E' and 'F' (Linformer's, s×n; the segment means for the mean kind),
   * 'dwc' (focused + DWC's kernel w, 1×k). {status, message, rows, cols, data}: data a copy
   * (Float32Array, row-major), or null when the variant draws no such matrix (status says why).
   */
  randomMatrix(which, knobs) {
    const ex = this.av.exports;
    const kind = RANDOM_KINDS.indexOf(which);
    const failed = (st, why = null) => ({ ...this.result(st, why), rows: 0, cols: 0, data: null });
    if (kind < 0) return failed(STATUS.ERR_VARIANT, `random matrix ${String(which).slice(0, 20)}: one of ${RANDOM_KINDS.join(', ')}`);
    const { status, why } = this.applyKnobs(knobs);
    if (status) return failed(status, why);
    const shape = this.take([['rc', 8]]);
    if (shape.status !== STATUS.OK) return failed(shape.status);
    const dims = shape.ptrs[0];
    let st = ex.av_random_matrix(0, dims, dims + 4, kind, this.prm, this.n, this.d, 0, 0);
    if (st < 0) return failed(st);
    const [rows, cols] = this.av.i32(dims, 2);
    const bytes = ex.av_random_work(kind, this.prm, this.n, this.d) >>> 0;
    if (bytes === 0) return failed(STATUS.ERR_TOO_LARGE);
    const got = this.take([['R', rows * cols * 4], ['work', bytes], ['rc', 8]]);
    if (got.status !== STATUS.OK) return failed(got.status);
    const [out, w, rc] = got.ptrs;
    st = ex.av_random_matrix(out, rc, rc + 4, kind, this.prm, this.n, this.d, w, bytes);
    if (st < 0) return failed(st);
    return { ...this.result(st), rows, cols, data: this.av.f32(out, rows * cols).slice() };
  }

  /** Output by the linear-time path (never forms n×n), into O. */
  linear(knobs) { return this.path(knobs, 'linear'); }
  /** O by the recurrent form (token by token; causal): av_recurrent. {status, message}; O in lab.O. */
  recurrent(knobs) { return this.path(knobs, 'recurrent'); }
  /** O by the chunkwise form (chunks of knobs.chunk tokens; causal): av_chunkwise. {status, message}; O in lab.O. */
  chunkwise(knobs) { return this.path(knobs, 'chunkwise'); }

  /** O by one of the paths without n×n ('linear', 'recurrent', 'chunkwise'; docs/recurrent.md). */
  path(knobs, which) {
    const ex = this.av.exports;
    const { status, why } = this.applyKnobs(knobs);
    if (status) return this.result(status, why);
    const work = ex[`av_${which}_work`], run = ex[`av_${which}`];
    const bytes = work(this.prm, this.n, this.d, this.dv) >>> 0;
    // O is small: with a 0-byte workspace the library itself says what is wrong (bad knobs, no linear
    // path, a feature dimension over the cap, or AV_ERR_TOO_LARGE), before touching any buffer
    const got = this.take([['O', this.n * this.dv * 4], ['vwork', bytes]]);
    if (got.status !== STATUS.OK) return this.result(got.status);
    const [O, w] = got.ptrs;
    const st = run(O, this.Qp, this.Kp, this.Vp, this.n, this.d, this.dv, this.prm, w, bytes);
    // a module built before AV_ERR_TOO_LARGE reports an unrepresentable need as a short workspace
    return this.result(bytes === 0 && st === STATUS.ERR_WORKSPACE ? STATUS.ERR_TOO_LARGE : st);
  }

  /**
   * The recurrence stepper (docs/mechanisms.md): the variant's state S (r×dv, float64) and z (r) after each
   * token, by av_recurrent_step over its features, for any causal variant with a recurrent form; softmax
   * keeps its key/value cache instead (no constant-size state). {status, message, stepper}: stepper null on
   * a refusal. The stepper owns buffers of this lab (named st*); it is valid until the lab's inputs change.
   *   stepper.kind 'state' | 'cache'; r, n, dv; t (tokens read, 0..n)
   *   stepper.seek(t)  read tokens until t have been read (from the start when going back)
   *   stepper.S, .z    views of the state (copy to keep); .o the output row of the last token read
   *   stepper.phiK(t), .phiQ(t), .v(t)   token t's features and value (copies)
   *   stepper.row(t)   row t of the masked matrix times V (float64), the quadratic path's output row
   *   stepper.status   the last step's status (AV_WARN_ZERO_ROW, an overflow)
   */
  stepper(knobs) {
    const ex = this.av.exports, n = this.n, d = this.d, dv = this.dv;
    const k = { ...knobs, causal: true };
    const failed = (st, why = null) => ({ ...this.result(st, why), stepper: null });
    const at = this.attend(k); // M and O = M·V: the rows the steps must reproduce
    if (at.status < 0) return failed(at.status, at.message);
    const Oq = Float64Array.from(this.O);
    const row = (t) => Oq.subarray(t * dv, (t + 1) * dv);
    const V = (t) => this.V.slice(t * dv, (t + 1) * dv);
    if (this.av.variant(k.variant).class === 'exact') { // softmax: its cache; o_t by the cache path
      const rec = this.recurrent(k);
      if (rec.status < 0) return failed(rec.status, rec.message);
      const Or = Float32Array.from(this.O);
      const st = { kind: 'cache', r: 0, n, d, dv, t: 0, status: STATUS.OK, S: null, z: null,
        o: new Float32Array(dv), seek(t) { this.t = Math.max(0, Math.min(n, t | 0)); if (this.t) this.o = Or.slice((this.t - 1) * dv, this.t * dv); },
        phiK: () => null, phiQ: () => null, v: V, row, K: (t) => this.K.slice(t * d, (t + 1) * d) };
      return { ...this.result(at.status), stepper: st };
    }
    const f = this.features(k);
    if (f.status < 0) return failed(f.status, f.message);
    const r = f.r, PQ = f.PhiQ.slice(), PK = f.PhiK.slice(); // copies: taking buffers may grow the memory
    const got = this.take([['stPQ', n * r * 4], ['stPK', n * r * 4], ['stS', r * dv * 8], ['stz', r * 8], ['sto', dv * 4]]);
    if (got.status !== STATUS.OK) return failed(got.status);
    const [pq, pk, S, z, o] = got.ptrs;
    this.av.f32(pq, n * r).set(PQ);
    this.av.f32(pk, n * r).set(PK);
    const lab = this, av = this.av;
    const { status, why } = this.applyKnobs(k);
    if (status) return failed(status, why);
    const stepper = {
      kind: 'state', r, n, d, dv, t: 0, status: STATUS.OK,
      get S() { return av.f64(S, r * dv); },
      get z() { return av.f64(z, r); },
      get o() { return av.f32(o, dv); },
      phiQ: (t) => av.f32(pq + t * r * 4, r).slice(),
      phiK: (t) => av.f32(pk + t * r * 4, r).slice(),
      v: V, row, K: (t) => lab.K.slice(t * d, (t + 1) * d),
      seek(t) {
        t = Math.max(0, Math.min(n, t | 0));
        if (t < this.t || this.t === 0) { // from the start
          av.f64(S, r * dv).fill(0); av.f64(z, r).fill(0); av.f32(o, dv).fill(0);
          this.t = 0; this.status = STATUS.OK;
          lab.applyKnobs(k); // other calls of this lab may have rewritten the params
        }
        while (this.t < t) {
          const s = ex.av_recurrent_step(o, S, z, pq + this.t * r * 4, pk + this.t * r * 4, lab.Vp + this.t * dv * 4, r, dv, n, lab.prm);
          if (s < 0) { this.status = s; break; }
          this.status = Math.max(this.status, s);
          this.t += 1;
        }
        return this.status;
      },
    };
    return { ...this.result(at.status), stepper };
  }

  /**
   * Hedgehog distillation (av_distill, docs/mechanisms.md) on this lab's Q, K: W (d×cols, float64; from
   * opts.W, or the identity with cols = d) trained by Adam on the mean row KL to softmax with knobs.scale
   * and knobs.causal. {status, message, distiller}; distiller.steps(count, lr = 0.05) → {status, message,
   * loss: Float64Array (the loss before each step)}; distiller.loss() the loss at W now; distiller.W a copy
   * (Float32Array, for the hedgehog variant's hedgehog_w), distiller.cols, distiller.t (steps taken);
   * distiller.free() when done.
   */
  distiller(knobs, opts = {}) {
    const ex = this.av.exports, n = this.n, d = this.d, av = this.av;
    const cols = opts.W ? opts.W.length / d : d;
    const failed = (st, why = null) => ({ ...this.result(st, why), distiller: null });
    if (this.status !== STATUS.OK) return failed(this.status);
    if (!Number.isInteger(cols) || cols < 1) return failed(STATUS.ERR_SIZE, `W holds ${opts.W.length} values, not d×cols with d = ${d}`);
    const { status, why } = this.applyKnobs({ variant: 'hedgehog', scale: knobs.scale ?? 0, causal: !!knobs.causal });
    if (status) return failed(status, why);
    const bytes = ex.av_distill_work(this.prm, n, d, cols) >>> 0;
    if (bytes === 0) return failed(STATUS.ERR_TOO_LARGE);
    const cnt = d * cols;
    const got = this.take([['dW', cnt * 8], ['dM', cnt * 16], ['dL', 8], ['dwork', bytes]]);
    if (got.status !== STATUS.OK) return failed(got.status);
    const [Wp, Mp, Lp, w] = got.ptrs;
    const W0 = av.f64(Wp, cnt);
    if (opts.W) W0.set(opts.W); else { W0.fill(0); for (let i = 0; i < d; i++) W0[i * cols + i] = 1; }
    const lab = this, scale = knobs.scale ?? 0, causal = !!knobs.causal;
    const distiller = {
      cols, t: 0,
      get W() { return Float32Array.from(av.f64(Wp, cnt)); },
      steps(count, lr = 0.05) {
        const { status: s0, why: w0 } = lab.applyKnobs({ variant: 'hedgehog', scale, causal });
        if (s0) return { ...lab.result(s0, w0), loss: null };
        const lp = lab.buf('dLs', Math.max(1, count) * 8);
        const st = ex.av_distill(Wp, Mp, this.t, lp, count, lr, cols, lab.Qp, lab.Kp, n, d, lab.prm, w, bytes);
        if (st >= 0) this.t += count;
        return { ...lab.result(st), loss: st < 0 ? null : av.f64(lp, count).slice() };
      },
      loss() {
        lab.applyKnobs({ variant: 'hedgehog', scale, causal });
        const st = ex.av_distill_loss(Lp, 0, Wp, cols, lab.Qp, lab.Kp, n, d, lab.prm, w, bytes);
        return st === STATUS.OK ? av.f64(Lp, 1)[0] : null;
      },
      free() { for (const b of ['dW', 'dM', 'dL', 'dwork', 'dLs']) lab.drop(b); },
    };
    return { ...this.result(STATUS.OK), distiller };
  }

  /** Feature dimension (or rank ceiling of the factors) of these knobs: {status, r}. */
  featureDim(knobs, factors = false) {
    const ex = this.av.exports;
    const { status, why } = this.applyKnobs(knobs);
    if (status) return { ...this.result(status, why), r: null };
    const rp = this.buf('r', 8);
    const s = (factors ? ex.av_factor_rank : ex.av_feature_dim)(rp, this.prm, this.n, this.d);
    const r = this.av.i32(rp, 1)[0];
    return { ...this.result(s), r: s === STATUS.OK || s === STATUS.ERR_FEATURE_DIM ? r : null };
  }

  /**
   * Singular values of M, A or S (descending) by the fast or accurate route.
   * @returns {{status:number, message:string, sv: Float64Array|null, floor:number|null}} sv is a copy, null
   *   when the route failed (e.g. M holds Inf after an overflow).
   */
  spectrum(which = 'M', route = 'fast') {
    const ex = this.av.exports, n = this.n;
    const failed = (st) => ({ ...this.result(st), sv: null, floor: null });
    if (this.status !== STATUS.OK) return failed(this.status);
    const src = this.bufs.get(which);
    if (!src) throw new Error(`attnviz: no ${which} computed yet`);
    const r = typeof route === 'number' ? route : Object.hasOwn(ROUTES, route) ? ROUTES[route] : -1;
    if (r !== ROUTES.fast && r !== ROUTES.accurate) return failed(STATUS.ERR_VARIANT);
    const bytes = ex.av_svd_work(n, r) >>> 0;
    if (bytes === 0) return failed(STATUS.ERR_TOO_LARGE); // n and the route are valid
    const got = this.take([['sv', n * 8 + 8], ['work', bytes]]);
    if (got.status !== STATUS.OK) return failed(got.status);
    const [sv, w] = got.ptrs;
    const st = ex.av_singular_values(sv, sv + n * 8, src.ptr, n, r, w, bytes);
    if (st < 0) return failed(st); // the buffer holds an older spectrum
    const out = this.av.f64(sv, n + 1);
    return { ...this.result(st), sv: out.slice(0, n), floor: out[n] };
  }

  /** The structural ceiling of the semiseparable rank for these knobs (av_semiseparable_ceiling): {status, r}. */
  semiseparableCeiling(knobs) {
    const { status, why } = this.applyKnobs(knobs);
    if (status) return { ...this.result(status, why), r: null };
    const rp = this.buf('r', 8);
    const s = this.av.exports.av_semiseparable_ceiling(rp, this.prm, this.n, this.d);
    return { ...this.result(s), r: s === STATUS.OK ? this.av.i32(rp, 1)[0] : null };
  }

  /**
   * The semiseparable rank of M from the last matrix() call (docs/readouts.md): the rank of the block
   * M[h:n, 0:h], h = ⌊n/2⌋, at the rank readout's tolerance (sigma1, floor: M's σ₁ and noise floor).
   * @returns {{status, message, rank: number|null}}
   */
  semiseparable(sigma1, floor, route = 'fast') {
    const ex = this.av.exports, n = this.n;
    const failed = (st) => ({ ...this.result(st), rank: null });
    if (this.status !== STATUS.OK) return failed(this.status);
    if (!this.bufs.has('M')) throw new Error('attnviz: call matrix() before semiseparable()');
    const r = ROUTES[route] ?? -1;
    const bytes = ex.av_semiseparable_work(n, r) >>> 0;
    if (bytes === 0) return failed(n < 2 ? STATUS.ERR_SIZE : STATUS.ERR_TOO_LARGE);
    const got = this.take([['ssr', 8], ['work', bytes]]);
    if (got.status !== STATUS.OK) return failed(got.status);
    const [rp, w] = got.ptrs;
    const st = ex.av_semiseparable_rank(rp, 0, this.bufs.get('M').ptr, n, sigma1, floor, r, w, bytes);
    return { ...this.result(st), rank: st >= 0 ? this.av.f64(rp, 1)[0] : null };
  }

  /**
   * Exact singular values of the scores scale·QKᵀ (rank ≤ d) in O(n·d²) by the low-rank route
   * (L = scale·Q, R = K): {status, message, sv, floor, r: d}; sv and floor null when they could not be
   * computed. `scale` multiplies Q as given (0 is not the default 1/√d here: pass the scale itself).
   */
  scoresSpectrum(scale) {
    const ex = this.av.exports, n = this.n, d = this.d;
    const failed = (st) => ({ ...this.result(st), sv: null, floor: null, r: d });
    if (this.status !== STATUS.OK) return failed(this.status);
    const bytes = ex.av_lowrank_svd_work(n, d) >>> 0;
    if (bytes === 0) return failed(STATUS.ERR_TOO_LARGE); // n and d are valid
    const got = this.take([['Ls', n * d * 4], ['Rs', n * d * 4], ['svs', n * 8 + 8], ['work', bytes]]);
    if (got.status !== STATUS.OK) return failed(got.status);
    const [L, R, sv, w] = got.ptrs;
    const Lv = this.av.f32(L, n * d), Q = this.Q;
    for (let i = 0; i < n * d; i++) Lv[i] = scale * Q[i];
    this.av.f32(R, n * d).set(this.K);
    const st = ex.av_lowrank_singular_values(sv, sv + n * 8, L, R, n, d, w, bytes);
    if (st < 0) return failed(st);
    const out = this.av.f64(sv, n + 1);
    return { ...this.result(st), sv: out.slice(0, n), floor: out[n], r: d };
  }

  /**
   * Exact spectrum of a low-rank variant from its factors in O(n·r²): {status, message, sv, floor, r};
   * null where the variant has no factors; sv and floor null when they could not be computed (status < 0:
   * e.g. AV_ERR_TOO_LARGE when the n×r factors exceed this build's memory).
   */
  factorSpectrum(knobs) {
    const ex = this.av.exports;
    const fr = this.featureDim(knobs, true);
    if (fr.status !== STATUS.OK) return null;
    const r = fr.r, n = this.n;
    const failed = (st) => ({ ...this.result(st), sv: null, floor: null, r });
    const fbytes = ex.av_factors_work(this.prm, n, this.d) >>> 0;
    const sbytes = ex.av_lowrank_svd_work(n, r) >>> 0;
    if (fbytes === 0 || sbytes === 0) return failed(STATUS.ERR_TOO_LARGE); // n, the knobs and r are valid
    const got = this.take([['L', n * r * 4], ['R', n * r * 4], ['svf', n * 8 + 8], ['vwork', fbytes], ['work', sbytes]]);
    if (got.status !== STATUS.OK) return failed(got.status);
    const [L, R, sv, fw, w] = got.ptrs;
    let st = ex.av_factors(L, R, this.Qp, this.Kp, n, this.d, this.prm, fw, fbytes);
    if (st < 0) return failed(st);
    st = ex.av_lowrank_singular_values(sv, sv + n * 8, L, R, n, r, w, sbytes);
    if (st < 0) return failed(st);
    const out = this.av.f64(sv, n + 1);
    return { ...this.result(st), sv: out.slice(0, n), floor: out[n], r };
  }

  /**
   * The heatmap cells of a matrix the lab holds (av_downsample): `of` 'M' (the last matrix()), 'A' (the
   * last reference()), 'S' (the last scores()) or 'M-A' (their difference), shrunk by b×b blocks to
   * size×size cells (size = ⌈n/b⌉). mode 'mean' (float64 sums: mass-preserving) or 'max' (the largest
   * entry; for 'M-A' the largest in magnitude, with its sign). A block with a NaN or ±Inf entry gives a
   * non-finite cell. Returns a new Float32Array, or `out` filled when it is a Float32Array of size² cells
   * (a recycled one: in this VM a fresh 256 kB array costs about a millisecond of page faults at its first
   * write, docs/performance.md), or null when the matrix is not there, b is not a whole number in 1..n, or
   * the cells do not fit in memory.
   */
  downsample(of, b, mode = 'mean', out = null) {
    const ex = this.av.exports, n = this.n;
    if (!Number.isInteger(b)) return null;
    const [x, y] = of === 'M-A' ? ['M', 'A'] : [of, null];
    if (!this.bufs.has(x) || (y && !this.bufs.has(y))) return null;
    const bytes = ex.av_downsample_work(n, b) >>> 0;
    if (bytes === 0) return null;
    const size = Math.ceil(n / b);
    const got = this.take([['cells', size * size * 4], ['dswork', bytes]]);
    if (got.status !== STATUS.OK) return null;
    const [cells, w] = got.ptrs;
    const st = ex.av_downsample(cells, this.bufs.get(x).ptr, y ? this.bufs.get(y).ptr : 0, n, b, mode === 'max' ? 1 : 0, w, bytes);
    if (st < 0) return null;
    const shown = this.av.f32(cells, size * size);
    if (out instanceof Float32Array && out.length === size * size) { out.set(shown); return out; }
    return shown.slice();
  }

  /**
   * The heatmap of a low-rank variant from its factors, without its n×n matrix (av_lowrank_block_mean):
   * {status, message, size, M} with M the size×size block means (size = ⌈n/b⌉) of L·Rᵀ, exact for a mean
   * downsample; null where the variant has no factors.
   */
  factorBlockMean(knobs, b) {
    const ex = this.av.exports;
    const fr = this.featureDim(knobs, true);
    if (fr.status !== STATUS.OK) return null;
    const r = fr.r, n = this.n, size = Math.ceil(n / b);
    const failed = (st) => ({ ...this.result(st), size, M: null });
    const fbytes = ex.av_factors_work(this.prm, n, this.d) >>> 0;
    const bbytes = ex.av_lowrank_block_mean_work(n, r, b) >>> 0;
    if (fbytes === 0 || bbytes === 0) return failed(STATUS.ERR_TOO_LARGE);
    const got = this.take([['L', n * r * 4], ['R', n * r * 4], ['cells', size * size * 4], ['work', Math.max(fbytes, bbytes)]]);
    if (got.status !== STATUS.OK) return failed(got.status);
    const [L, R, cells, w] = got.ptrs;
    let st = ex.av_factors(L, R, this.Qp, this.Kp, n, this.d, this.prm, w, fbytes);
    if (st < 0) return failed(st);
    const st2 = ex.av_lowrank_block_mean(cells, L, R, n, r, b, w, bbytes);
    if (st2 < 0) return failed(st2);
    return { ...this.result(st), size, M: this.av.f32(cells, size * size).slice() };
  }

  /**
   * Every readout of docs/readouts.md for the matrix M from the last matrix() call.
   * opts.sv / opts.floor: a spectrum already computed (else the fast route runs); opts.sv = null skips
   *   the spectrum (the spectral readouts are then null with a reason);
   * opts.reference: false when A already holds the softmax reference for these knobs (plain softmax with
   *   their scale and mask: a decayed or windowed softmax is compared with it);
   * opts.tau: the sparsity_tau threshold; opts.route: 'fast' | 'accurate';
   * opts.semiseparable: false skips semiseparable_rank's own SVD of M's block (an eighth of the full one;
   *   the readout then keeps its reason) for callers that do not read it;
   * opts.of: 'A' reads the softmax reference from the last reference() call instead of M (no error
   *   readouts then: they compare with A itself);
   * opts.rows: keep the row entropies the readouts compute (av_readouts_rows), for rowEntropyHistogram().
   * opts.summary: a key naming the reference A, V and the mask (any string that changes whenever they do):
   *   the reference's share of the readouts is kept under it and reused while it stays
   *   (av_reference_summary, av_readouts_summarised: the same readouts, one n²·dv product and n² logarithms
   *   fewer). reference() and generate() drop it anyway; a caller writing A or V itself must change the key.
   * @returns {object} keyed by the JSON names; undefined readouts are null with `<key>_reason`.
   */
  readouts(knobs, opts = {}) {
    const ex = this.av.exports, n = this.n, k = { ...this.av.defaultKnobs, ...knobs };
    if (this.status !== STATUS.OK) return this.readoutsFailed(this.status);
    const of = opts.of === 'A' ? 'A' : 'M';
    if (!this.bufs.has(of)) throw new Error(`attnviz: call ${of === 'A' ? 'reference' : 'matrix'}() before readouts()`);
    let sv = opts.sv, floor = opts.floor ?? 0;
    if (sv === undefined) ({ sv, floor } = this.spectrum(of, opts.route ?? 'fast')); // null when it failed
    const isSoftmax = of === 'A' || this.av.isPlainSoftmax(k);
    // a reference that could not be computed for these knobs is not compared with (no stale A)
    const refOk = isSoftmax || opts.reference === false || this.reference(k).status >= 0;
    const bytes = ex.av_readouts_work(n, this.dv) >>> 0;
    if (bytes === 0) return this.readoutsFailed(STATUS.ERR_TOO_LARGE); // n and dv are valid
    this.rowsRead = null;
    const got = this.take([['svr', n * 8], ['vals', 64 * 8], ['reasons', 64 * 4], ['work', bytes], ['rowH', opts.rows ? n * 8 : 0]]);
    if (got.status !== STATUS.OK) return this.readoutsFailed(got.status);
    const [svr, vals, reasons, w, rowH] = got.ptrs;
    let svp = 0;
    if (sv) {
      svp = svr;
      this.av.f64(svp, n).set(sv);
    }
    // reference() rewrote the params; av_readouts takes causal directly, so they need no reset
    const A = isSoftmax || !refOk ? 0 : this.bufs.get('A')?.ptr ?? 0;
    const causal = k.causal ? 1 : 0, rows = opts.rows ? rowH : 0;
    const summary = A && opts.summary !== undefined ? this.summaryOf(String(opts.summary), causal, w, bytes) : null;
    const st = summary
      ? ex.av_readouts_summarised(vals, reasons, rows, this.bufs.get(of).ptr, svp, floor, A, this.Vp, summary.ptr,
        summary.bytes, n, this.dv, causal, opts.tau ?? 0, w, bytes)
      : ex.av_readouts_rows(vals, reasons, rows, this.bufs.get(of).ptr, svp, floor, A, this.Vp, n, this.dv, causal,
        opts.tau ?? 0, w, bytes);
    if (opts.rows && st >= 0) this.rowsRead = { of, causal: !!k.causal };
    if (of === 'M' && A && st >= 0) this.trueRowKl(knobs, A, vals, reasons);
    const out = { status: st, message: this.av.statusString(st) };
    const names = this.readoutNames();
    const count = names.length;
    const v = this.av.f64(vals, count), r = this.av.i32(reasons, count);
    for (let i = 0; i < count; i++) {
      const key = names[i];
      if (r[i] !== 0 || !Number.isFinite(v[i])) {
        out[key] = null;
        out[`${key}_reason`] = this.reasonString(r[i] || REASON_NONFINITE);
      } else out[key] = v[i];
    }
    if (sv && n >= 2 && opts.semiseparable !== false) { // its own SVD of the block (av_readouts leaves it undefined)
      const ss = this.semiseparable(sv[0], floor, opts.route ?? 'fast');
      if (ss.rank !== null) { out.semiseparable_rank = ss.rank; delete out.semiseparable_rank_reason; }
    }
    out.singular_values = sv ?? null;
    out.noise_floor = sv ? floor : null;
    return out;
  }

  /**
   * row_kl_mean where av_readouts, which sees M alone, answered "zero where positive" (vals, reasons: its
   * answers in wasm memory): av_row_kl takes those cells' logarithms from the log domain (Q, K and the
   * variant's knobs, which reference() had replaced), so a float32 underflow gives the true, finite KL and
   * only a true 0 (+∞) keeps the reason. On a failure av_readouts' answer stays. Returns the status.
   */
  trueRowKl(knobs, A, vals, reasons) {
    const ex = this.av.exports, n = this.n, i = this.readoutNames().indexOf('row_kl_mean');
    if (this.av.i32(reasons + 4 * i, 1)[0] !== REASON_ZERO_WHERE_POSITIVE) return STATUS.OK;
    const { status } = this.applyKnobs(knobs);
    if (status) return status;
    const bytes = ex.av_row_kl_work(this.prm, n, this.d) >>> 0;
    if (bytes === 0) return STATUS.ERR_TOO_LARGE;
    const got = this.take([['work', bytes]]);
    if (got.status !== STATUS.OK) return got.status;
    // it writes both (the value, or NaN with a reason) only when it returns a status ≥ 0
    return ex.av_row_kl(vals + 8 * i, reasons + 4 * i, this.bufs.get('M').ptr, A, this.Qp, this.Kp, n, this.d, this.prm,
      got.ptrs[0], bytes);
  }

  /**
   * The summary of the reference A and V under `key` (readouts' opts.summary): the kept one while the key,
   * the mask and the lab's own writes stay, else computed afresh (w: the readouts' workspace). null when it
   * cannot be (the readouts then run without it).
   */
  summaryOf(key, causal, w, bytes) {
    const ex = this.av.exports, n = this.n;
    const sbytes = ex.av_reference_summary_bytes(n) >>> 0;
    const kept = this.summaryKept;
    if (kept && kept.key === key && kept.causal === causal && kept.version === this.refVersion && this.bufs.has('summary')) {
      return { ptr: this.bufs.get('summary').ptr, bytes: sbytes };
    }
    this.summaryKept = null;
    const got = this.take([['summary', sbytes]]);
    if (got.status !== STATUS.OK) return null;
    const st = ex.av_reference_summary(got.ptrs[0], sbytes, this.bufs.get('A').ptr, this.Vp, n, this.dv, causal, w, bytes);
    if (st < 0) return null;
    this.summaryKept = { key, causal, version: this.refVersion };
    return { ptr: got.ptrs[0], bytes: sbytes };
  }

  /** readouts() when nothing could be computed: every readout null, the status's sentence as the reason. */
  readoutsFailed(status) {
    const out = this.result(status);
    for (const key of this.readoutNames()) {
      out[key] = null;
      out[`${key}_reason`] = out.message;
    }
    out.singular_values = null;
    out.noise_floor = null;
    return out;
  }

  /** The readouts' JSON names in the library's order (the registry's, av_readout_info). */
  readoutNames() {
    if (!this.av._readoutNames) this.av._readoutNames = Object.freeze(this.av.registry.readouts.map((r) => r.key));
    return this.av._readoutNames;
  }
  readoutCount() { return this.readoutNames().length; }

  /** The sentence for a reason code (decoded once per code). */
  reasonString(code) {
    const cache = (this.av._reasons ??= new Map());
    if (!cache.has(code)) cache.set(code, this.av.cstring(this.av.exports.av_reason_string(code)));
    return cache.get(code);
  }

  /** Truncated-SVD error curve e(r), r = 0..n, from singular values (a copy), or null. */
  errorCurve(sv) {
    const n = sv.length;
    if (this.status !== STATUS.OK || !(n >= 1 && n <= this.av.limits.maxN)) return null;
    const got = this.take([['svr', n * 8], ['curve', (n + 1) * 8]]);
    if (got.status !== STATUS.OK) return null;
    const [svp, e] = got.ptrs;
    this.av.f64(svp, n).set(sv);
    const st = this.av.exports.av_error_curve(e, svp, n);
    return st ? null : this.av.f64(e, n + 1).slice();
  }

  /**
   * Row-entropy histogram of M or A ('M' | 'A', the last matrix()/reference() result): counts of the
   * per-row entropies (allowed entries normalised to sum 1; j ≤ i when causal) in `bins` equal-width
   * bins over [0, ln n]. Rows with a negative entry or a zero sum are left out: `left` counts them and
   * the status is AV_WARN_ZERO_ROW (1), with its sentence in `message`. `bins` that is not a positive
   * integer is AV_ERR_SIZE; more than this build's memory holds, AV_ERR_TOO_LARGE.
   * @returns {{status:number, message:string, counts:Int32Array|null, bins:number, top:number, left:number}}
   *          counts is a copy (null on an error status).
   */
  entropyHistogram(which = 'M', bins = 24, causal = false) {
    const failed = (st) => ({ ...this.result(st), counts: null, bins, top: Math.log(this.n), left: null });
    if (this.status !== STATUS.OK) return failed(this.status);
    const src = this.bufs.get(which);
    if (!src) throw new Error(`attnviz: no ${which} computed yet`);
    if (!Number.isInteger(bins) || bins < 1) return failed(STATUS.ERR_SIZE);
    const got = this.take([['hist', bins * 4]]);
    if (got.status !== STATUS.OK) return failed(got.status);
    const p = got.ptrs[0];
    const st = this.av.exports.av_row_entropy_hist(p, bins, src.ptr, this.n, causal ? 1 : 0);
    const counts = st < 0 ? null : this.av.i32(p, bins).slice();
    let rows = 0;
    if (counts) for (let i = 0; i < bins; i++) rows += counts[i];
    return { ...this.result(st), counts, bins, top: Math.log(this.n), left: counts ? this.n - rows : null };
  }

  /**
   * The row-entropy histogram of the matrix the last readouts({rows: true}) call read, binned from the
   * entropies it computed (av_entropy_hist: entropyHistogram()'s counts without a second pass over the
   * n² entries). Same shape as entropyHistogram(), plus `of` ('M' | 'A') and `causal`; null when the last
   * readouts() call kept no rows.
   */
  rowEntropyHistogram(bins = 24) {
    const rows = this.rowsRead;
    if (!rows || this.status !== STATUS.OK) return null;
    if (!Number.isInteger(bins) || bins < 1) return { ...this.result(STATUS.ERR_SIZE), counts: null, bins, top: Math.log(this.n), left: null, ...rows };
    const got = this.take([['hist', bins * 4]]);
    if (got.status !== STATUS.OK) return { ...this.result(got.status), counts: null, bins, top: Math.log(this.n), left: null, ...rows };
    const p = got.ptrs[0];
    const st = this.av.exports.av_entropy_hist(p, bins, this.bufs.get('rowH').ptr, this.n);
    const counts = st < 0 ? null : this.av.i32(p, bins).slice();
    let kept = 0;
    if (counts) for (let i = 0; i < bins; i++) kept += counts[i];
    return { ...this.result(st), counts, bins, top: Math.log(this.n), left: counts ? this.n - kept : null, ...rows };
  }

  /** Cost counts {quad,linear,recurrent,chunkwise}_{madds,bytes} (av_cost_path; null where a path does not exist). */
  cost(knobs) {
    const st = this.setKnobs(knobs);
    if (st) return null;
    // the four paths of av_cost_path, keyed as `attnviz readouts` prints them (null where a path does not exist)
    const p = this.buf('cost', 2 * 8), out = {};
    for (const [i, path] of ['quad', 'linear', 'recurrent', 'chunkwise'].entries()) {
      if (this.av.exports.av_cost_path(p, i, this.prm, this.n, this.d, this.dv)) return null;
      const c = this.av.f64(p, 2);
      out[`${path}_madds`] = c[0] < 0 ? null : c[0];
      out[`${path}_bytes`] = c[1] < 0 ? null : c[1];
    }
    return out;
  }

  free() {
    for (const { ptr } of this.bufs.values()) this.av.free(ptr);
    this.bufs.clear();
    this.av.free(this.prm);
    this.prm = 0;
    this.Qp = this.Kp = this.Vp = 0;
  }
}

/** AV_OK when the library accepts n, d, dv (integers in 1…AV_MAX_N, 1…AV_MAX_D), else AV_ERR_SIZE. */
function sizeStatus(limits, n, d, dv) {
  const ok = (x, max) => Number.isInteger(x) && x >= 1 && x <= max;
  return ok(n, limits.maxN) && ok(d, limits.maxD) && ok(dv, limits.maxD) ? STATUS.OK : STATUS.ERR_SIZE;
}
