// lab.mjs: the lab (av.lab(n, d), web/wasm/attnviz.mjs): Q, K, V, the variant's matrix M, the softmax
// reference A, the scores S, spectra, readouts and the mechanisms, in buffers of wasm memory. Every call
// answers {status, message, …}; a size the library refuses allocates nothing (web/wasm/loading.mjs limits).

import { STATUS, REASON_NONFINITE, REASON_ZERO_WHERE_POSITIVE } from './loading.mjs';

const ROUTES = { fast: 0, accurate: 1 };
/** The registry's class of the gated families (their gates are data: setGates, generateGates). */
export const GATED_CLASS = 'gated';
const RANDOM_KINDS = ['omega', 'E', 'F', 'dwc']; // enum av_random_kind

export class Lab {
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
    // the gated families' inputs this lab holds (setGates, generateGates): {channels, beta, ab} or null; their
    // arrays are the buffers gG (n×channels), gBeta (n), gA and gB (n×d each); applyKnobs points a gated
    // variant's params at them
    this.gateSet = null;
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
    if (!st && this.gateSet && row.class === GATED_CLASS) st = this.pointGates();
    return { status: st, why: null };
  }

  /** The params' gate pointers at this lab's gate buffers (av_params_set_gates, av_params_set_dplr). */
  pointGates() {
    const ex = this.av.exports, g = this.gateSet, ptr = (name) => this.bufs.get(name)?.ptr ?? 0;
    let st = ex.av_params_set_gates(this.prm, g.channels ? ptr('gG') : 0, this.n, g.channels || 1, g.beta ? ptr('gBeta') : 0);
    if (!st && g.ab) st = ex.av_params_set_dplr(this.prm, ptr('gA'), ptr('gB'), this.n);
    return st;
  }

  /**
   * The gated families' inputs for this lab's n tokens (docs/gated.md), copied into wasm memory: {g (n×channels
   * log-gates, or null: the constant case of the knobs), channels (1 or d), beta (n, or null), a, b (n×d each, or
   * null)}; null clears them. Every later call with a gated variant reads them (the library checks their values:
   * AV_ERR_GATES for a gate > 0 or a β outside (0, 2]). {status, message}.
   */
  setGates(gates) {
    if (this.status !== STATUS.OK) return this.result(this.status);
    if (!gates) { this.gateSet = null; return this.result(STATUS.OK); }
    const { g = null, beta = null, a = null, b = null } = gates, n = this.n, d = this.d;
    const channels = g ? gates.channels ?? g.length / n : 0;
    if (g && !(Number.isInteger(channels) && channels >= 1 && g.length >= n * channels)) {
      return this.result(STATUS.ERR_SIZE, `gates hold ${g.length} values for n = ${n} tokens`);
    }
    if (beta && beta.length < n) return this.result(STATUS.ERR_SIZE, `betas hold ${beta.length} values for n = ${n} tokens`);
    if ((a && a.length < n * d) || (b && b.length < n * d) || !a !== !b) {
      return this.result(STATUS.ERR_SIZE, `a and b must both hold n×d = ${n}×${d} values`);
    }
    const specs = [];
    if (g) specs.push(['gG', n * channels * 4]);
    if (beta) specs.push(['gBeta', n * 4]);
    if (a) specs.push(['gA', n * d * 4], ['gB', n * d * 4]);
    const got = this.take(specs);
    if (got.status !== STATUS.OK) return this.result(got.status);
    const put = (name, x, len) => this.av.f32(this.bufs.get(name).ptr, len).set(x.subarray ? x.subarray(0, len) : x.slice(0, len));
    if (g) put('gG', g, n * channels);
    if (beta) put('gBeta', beta, n);
    if (a) { put('gA', a, n * d); put('gB', b, n * d); }
    this.gateSet = { channels, beta: !!beta, ab: !!a };
    return this.result(STATUS.OK);
  }

  /**
   * Generated gates (src/gates.c, docs/gated.md "Generated gates") into this lab, as setGates takes them:
   * spec {kind: 'constant' | 'uniform' | 'resets' | 'slow' | 'projection' | 'mamba2', channels (1 or d), alpha, lo,
   * hi, period, at (token positions), rate, wavelength, seed, A, dt; beta: null or {kind: 'constant' | 'uniform' |
   * 'projection', value, lo, hi, seed}; ab: null or {kind: 'rwkv7', icl} (dplr's a = −κ̂, b = κ̂·icl from K,
   * av_rwkv7_vectors)}. The projections read K as it is; 'mamba2' also scales K in place (k = Δ·B: call it once per
   * fresh inputs). {status, message}; on a refusal the lab's gates are cleared.
   */
  generateGates(spec) {
    if (this.status !== STATUS.OK) return this.result(this.status);
    const ex = this.av.exports, n = this.n, d = this.d;
    const kind = spec.kind ?? 'constant', channels = kind === 'mamba2' ? 1 : spec.channels ?? 1;
    const at = Array.isArray(spec.at) ? spec.at : [];
    const ab = spec.ab?.kind === 'rwkv7';
    const got = this.take([['gG', n * channels * 4], ['gBeta', n * 4], ['gAt', Math.max(1, at.length) * 4],
      ...(ab ? [['gA', n * d * 4], ['gB', n * d * 4]] : [])]);
    if (got.status !== STATUS.OK) { this.gateSet = null; return this.result(got.status); }
    const [g, bp, atp] = got.ptrs, seed = (spec.seed ?? 1) >>> 0;
    let st;
    switch (kind) {
      case 'constant': st = ex.av_gates_constant(g, n, channels, spec.alpha); break;
      case 'uniform': st = ex.av_gates_uniform(g, n, channels, spec.lo, spec.hi, seed); break;
      case 'resets':
        this.av.i32(atp, at.length).set(at);
        st = ex.av_gates_resets(g, n, channels, spec.alpha, spec.period ?? 0, at.length ? atp : 0, at.length, spec.rate ?? 0, seed);
        break;
      case 'slow': st = ex.av_gates_slow(g, n, channels, spec.lo, spec.hi, spec.wavelength, seed); break;
      case 'projection': st = ex.av_gates_projection(g, this.Kp, n, d, channels, seed); break;
      case 'mamba2': this.refVersion += 1; st = ex.av_gates_mamba2(g, 0, this.Kp, n, d, spec.A, spec.dt, seed); break;
      default: st = STATUS.ERR_VARIANT;
    }
    const b = spec.beta;
    if (!st && b) {
      const bs = (b.seed ?? 1) >>> 0;
      st = b.kind === 'uniform' ? ex.av_betas_uniform(bp, n, b.lo, b.hi, bs)
        : b.kind === 'projection' ? ex.av_betas_projection(bp, this.Kp, n, d, b.hi, bs)
          : b.kind === 'constant' ? ex.av_betas_constant(bp, n, b.value) : STATUS.ERR_VARIANT;
    }
    if (!st && ab) { // RWKV-7's read and write vectors from K (src/dplr.c)
      st = ex.av_rwkv7_vectors ? ex.av_rwkv7_vectors(this.bufs.get('gA').ptr, this.bufs.get('gB').ptr, this.Kp, n, d, 0, spec.ab.icl ?? 0.5)
        : STATUS.ERR_VARIANT;
      if (st) { this.gateSet = null; return this.result(st, 'RWKV-7\'s a and b'); }
    }
    this.drop('gAt');
    if (st) { this.gateSet = null; return this.result(st, `the ${st === STATUS.ERR_VARIANT ? `gate generator ${String(kind).slice(0, 20)}` : `${kind} gates`}`); }
    this.gateSet = { channels, beta: !!b, ab };
    return this.result(STATUS.OK);
  }

  /**
   * Copies of the gates this lab holds: {g (n×channels), channels, beta (n) | null, a, b (n×d) | null}, or null.
   * g is null when none were set (the knobs' constant gate).
   */
  gates() {
    const s = this.gateSet;
    if (!s) return null;
    const n = this.n, d = this.d, copy = (name, len) => this.av.f32(this.bufs.get(name).ptr, len).slice();
    return {
      g: s.channels ? copy('gG', n * s.channels) : null, channels: s.channels, beta: s.beta ? copy('gBeta', n) : null,
      a: s.ab ? copy('gA', n * d) : null, b: s.ab ? copy('gB', n * d) : null,
    };
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
    // av_generate writes V as n×d: with dv ≠ d it draws into a scratch n×d block and keeps dv columns (its
    // entries are iid, so any dv of them are V's draw); dv > d has no such draw
    if (this.dv > this.d) return this.result(STATUS.ERR_SIZE, `generated V has d = ${this.d} columns, fewer than dv = ${this.dv}`);
    let V = this.Vp;
    if (this.dv !== this.d) {
      const got = this.take([['Vgen', this.n * this.d * 4]]);
      if (got.status !== STATUS.OK) return this.result(got.status);
      [V] = got.ptrs;
    }
    this.refVersion += 1;
    const st = this.av.exports.av_generate(this.Qp, this.Kp, V, this.n, this.d, id, std, seed >>> 0);
    if (V !== this.Vp && st === STATUS.OK) {
      const from = this.av.f32(V, this.n * this.d), to = this.V;
      for (let i = 0; i < this.n; i++) to.set(from.subarray(i * this.d, i * this.d + this.dv), i * this.dv);
    }
    return this.result(st);
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
    if (this.av.variant(k.variant).class === GATED_CLASS) return this.gatedStepper(k, at, row, V);
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
   * The stepper of a gated family (docs/gated.md, docs/mechanisms.md): its state S (d×dv, float64) after each
   * token by av_gated_step with this lab's gates (setGates/generateGates; none: the knobs' constant gate), or for
   * fox the key/value cache with each entry's accumulated bias. Besides the fields of stepper() (kind 'gated' or
   * 'cache', r = d): stepper.family; .scale, .l2norm (the resolved knobs); .Sprev (S before the last token read);
   * .gate(t) {alpha (1 or d values), beta, a, b (d each, or null)}; .kt(t) k̃_t = l2norm?(k_t); .bias(t) (fox) the
   * bias of every cache entry j < t for the query t − 1, Σ_{l=j+1..t−1} g_l.
   */
  gatedStepper(k, at, row, V) {
    const ex = this.av.exports, n = this.n, d = this.d, dv = this.dv, lab = this, av = this.av;
    const failed = (st, why = null) => ({ ...this.result(st, why), stepper: null });
    const { status, why } = this.applyKnobs(k);
    if (status) return failed(status, why);
    const got0 = this.take([['resolved', ex.av_params_size() >>> 0], ['bad', 8]]);
    if (got0.status !== STATUS.OK) return failed(got0.status);
    const chk = ex.av_params_check(got0.ptrs[0], this.prm, n, d, got0.ptrs[1]);
    if (chk < 0) return failed(chk);
    const knob = (key) => ex.av_params_get(got0.ptrs[0], this.av.knobKeys.indexOf(key) + 1);
    const scale = knob('scale'), l2norm = knob('qk_l2norm') > 0, decay = knob('decay'), beta0 = knob('beta');
    const held = this.gates(), ch = held?.g ? held.channels : 1;
    const family = k.variant;
    const gate = (t) => {
      const g = held?.g ? held.g.subarray(t * ch, (t + 1) * ch) : null;
      return {
        g: g ? Float32Array.from(g) : Float32Array.of(Math.log(decay)),
        alpha: g ? Float64Array.from(g, Math.exp) : Float64Array.of(decay),
        beta: family === 'gdn' || family === 'kda' ? (held?.beta ? held.beta[t] : beta0) : null,
        a: held?.a ? held.a.slice(t * d, (t + 1) * d) : null,
        b: held?.b ? held.b.slice(t * d, (t + 1) * d) : null,
      };
    };
    const K = (t) => this.K.slice(t * d, (t + 1) * d);
    const kt = (t) => {
      const x = K(t);
      if (!l2norm) return x;
      let ss = 0;
      for (const v of x) ss += v * v;
      const f = 1 / Math.sqrt(ss + 1e-6);
      return x.map((v) => v * f);
    };
    const base = { r: d, n, d, dv, t: 0, status: STATUS.OK, family, scale, l2norm, channels: ch, gate, kt, v: V, row, K };
    if (family === 'fox') { // no constant-size state: the cache, o_t by the cache path
      const rec = this.recurrent(k);
      if (rec.status < 0) return failed(rec.status, rec.message);
      const Or = Float32Array.from(this.O);
      const bias = (t) => { // entry j's bias for query t − 1: Σ_{l=j+1..t−1} g_l, summed from the newest back
        const out = new Float64Array(t);
        let c = 0;
        for (let j = t - 1; j >= 0; j--) { out[j] = c; c += gate(j).g[0]; }
        return out;
      };
      const st = { ...base, kind: 'cache', S: null, z: null, Sprev: null, o: new Float32Array(dv), bias,
        seek(t) { this.t = Math.max(0, Math.min(n, t | 0)); if (this.t) this.o = Or.slice((this.t - 1) * dv, this.t * dv); return this.status; } };
      return { ...this.result(at.status), stepper: st };
    }
    const bytes = { S: d * dv * 8, o: dv * 4, g: d * 4, a: d * 4, b: d * 4 };
    const got = this.take([['stS', bytes.S], ['sto', bytes.o], ['stg', bytes.g], ['sta', bytes.a], ['stb', bytes.b]]);
    if (got.status !== STATUS.OK) return failed(got.status);
    const [S, o, gp, ap, bp] = got.ptrs;
    const Sprev = new Float64Array(d * dv);
    const stepper = {
      ...base, kind: 'gated', Sprev, z: null,
      get S() { return av.f64(S, d * dv); },
      get o() { return av.f32(o, dv); },
      seek(t) {
        t = Math.max(0, Math.min(n, t | 0));
        if (t < this.t || this.t === 0) { // from the start
          av.f64(S, d * dv).fill(0); av.f32(o, dv).fill(0); Sprev.fill(0);
          this.t = 0; this.status = STATUS.OK;
          lab.applyKnobs(k); // other calls of this lab may have rewritten the params
        }
        while (this.t < t) {
          const i = this.t, gi = gate(i);
          if (i === t - 1) Sprev.set(av.f64(S, d * dv));
          if (held?.g) av.f32(gp, ch).set(gi.g);
          if (gi.a) { av.f32(ap, d).set(gi.a); av.f32(bp, d).set(gi.b); }
          const s = ex.av_gated_step(o, S, lab.Qp + i * d * 4, lab.Kp + i * d * 4, lab.Vp + i * dv * 4, held?.g ? gp : 0,
            gi.beta ?? beta0, gi.a ? ap : 0, gi.a ? bp : 0, d, dv, lab.prm);
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
    this.gateSet = null;
  }
}

/** AV_OK when the library accepts n, d, dv (integers in 1…AV_MAX_N, 1…AV_MAX_D), else AV_ERR_SIZE. */
function sizeStatus(limits, n, d, dv) {
  const ok = (x, max) => Number.isInteger(x) && x >= 1 && x <= max;
  return ok(n, limits.maxN) && ok(d, limits.maxD) && ok(dv, limits.maxD) ? STATUS.OK : STATUS.ERR_SIZE;
}
