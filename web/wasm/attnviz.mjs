// attnviz.mjs: the JS loader's entry, what the rest imports; web/wasm/ is the only code that touches the
// WebAssembly module.
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
//
// The loader is split by what it holds: web/wasm/loading.mjs (the module's source, the SIMD probe,
// instantiating, the limits and the status and knob tables), web/wasm/lab.mjs (class Lab) and
// web/wasm/model.mjs (class Model); this entry (the module object and its registry) is what the rest imports.

import { fillReadoutInfo } from './readout-info.mjs';
import { STATUS, DEFAULT_KNOBS, LONG_MAX, simdSupported, readLimits, deepFreeze, knobDefault, fillOnce, instantiate } from './loading.mjs';
import { Lab } from './lab.mjs';
import { Model, HFModel, folderFiles, headerInForm } from './model.mjs';
import { VERSION } from './version.mjs';

export { STATUS, DEFAULT_KNOBS, simdSupported, VERSION };

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
  const { exports, usesSimd, module, memoryMax } = await instantiate(opts);
  const av = new Attnviz(exports, usesSimd, memoryMax);
  av.module = module;
  av.memoryMax = memoryMax;
  return av;
}

/**
 * A Hugging Face model folder (docs/hf.md, docs/model.md "Hugging Face folders in the page") in the loaded
 * module `av`: `files` its File objects (or {name, bytes}) in any order, as a folder picker or a drop gives
 * them (config.json, the index, *.safetensors and tokenizer.json are read, the rest ignored). The shards are
 * copied into wasm memory opts.chunk bytes at a time (default 32 MB), onProgress({stage: 'reading', done,
 * total, file}) after each; opts as HFModel.fromFolder (maxTokens, cancelled, deviceGB). A promise of
 * {status, message, model}: model a Model (free() when done; config.format 'hf'), or null with one sentence.
 * A function, not a method of av: a page or element that never reads a folder does not carry its code.
 */
export function loadModelFolder(av, files, onProgress = null, opts = {}) {
  return HFModel.fromFolder(av, folderFiles([...files]), onProgress, opts);
}

// ----------------------------------------------------------------------------------------------------
// the module and its registry

const NPY_INFO_BYTES = 128;      // sizeof(av_npy_info) is 88 in wasm32: int ndim, int64_t shape[8] at offset 8, …

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
      const p = exports.av_generator_name(g) >>> 0;
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
   * the last draw), perSeed: Float64Array (each draw's mean), pairMean: Float64Array (each pair's error, mean
   * over the draws), mean, min, max}; errors null on a refusal. opts.setup(lab), when given, runs after the knobs
   * are applied (a gated family's gates for these N pairs: lab.setGates, lab.generateGates) and answers
   * {status, message}; the knobs are applied again after it, pointing the params at the gates.
   */
  recall(knobs, opts) {
    const { pairs: N, d } = opts, seeds = opts.K ? 1 : Math.max(1, opts.seeds ?? 1);
    const lab = new Lab(this, N, d, d, false);
    const failed = (r) => ({ ...r, errors: null, perSeed: null, mean: null, min: null, max: null });
    try {
      if (lab.status !== STATUS.OK) return failed(lab.result(lab.status));
      let { status, why } = lab.applyKnobs({ ...knobs, causal: true });
      if (status) return failed(lab.result(status, why));
      if (opts.setup) {
        const r = opts.setup(lab);
        if (r.status < 0) return failed(r);
        ({ status, why } = lab.applyKnobs({ ...knobs, causal: true }));
        if (status) return failed(lab.result(status, why));
      }
      const ex = this.exports, bytes = ex.av_recall_work(lab.prm, N, d) >>> 0;
      if (bytes === 0) { // the reason, from a call that checks the arguments first
        const st = ex.av_recall_pairs(8, 8, 8, N, d, lab.prm, 0, 0);
        return failed(lab.result(st === STATUS.ERR_NULL ? STATUS.ERR_TOO_LARGE : st));
      }
      const got = lab.take([['rK', N * d * 4], ['rV', N * d * 4], ['err', N * 8], ['work', bytes]]);
      if (got.status !== STATUS.OK) return failed(lab.result(got.status));
      const [kp, vp, ep, w] = got.ptrs;
      const perSeed = new Float64Array(seeds), pairMean = new Float64Array(N);
      let worst = STATUS.OK;
      for (let s = 0; s < seeds; s++) {
        if (opts.K) { this.f32(kp, N * d).set(opts.K.subarray(0, N * d)); this.f32(vp, N * d).set(opts.V.subarray(0, N * d)); }
        else ex.av_recall_draw(kp, vp, N, d, s);
        const st = ex.av_recall_pairs(ep, kp, vp, N, d, lab.prm, w, bytes);
        if (st < 0) return failed(lab.result(st));
        worst = Math.max(worst, st);
        const e = this.f64(ep, N);
        let m = 0;
        for (let i = 0; i < N; i++) { m += e[i]; pairMean[i] += e[i] / seeds; }
        perSeed[s] = m / N;
      }
      let mean = 0, min = Infinity, max = -Infinity;
      for (const v of perSeed) { mean += v / seeds; min = Math.min(min, v); max = Math.max(max, v); }
      return { ...lab.result(worst), errors: this.f64(ep, N).slice(), perSeed, pairMean, mean, min, max };
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
    const bytes = new Uint8Array(this.memory.buffer, ptr >>> 0); // an address: unsigned (memory may pass 2 GB)
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
