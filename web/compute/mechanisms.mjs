// mechanisms.mjs: the computations behind the mechanism views (docs/mechanisms.md), over the loader's
// lab (web/wasm/attnviz.mjs); no DOM. They run in the mechanisms worker (web/workers/worker.mjs) and in Vitest.
//   stepFrame     one token of the recurrence stepper: φ(k_t), v_t, the state S_t and z_t, the output row
//                 against the masked matrix's row, and the bytes of the state against softmax's cache; for
//                 the gated families the gate α_t, β_t, k̃_t, the rows a reset cleared, u_t (delta) or x_t (dplr)
//   scalingRun    time and memory of the quadratic softmax path, the variant's linear path and its chunkwise
//                 path for n = 64, 128, … while each stays within a stated memory budget
//   recallCurve   recall error against the pair count N (or against d) for a list of memories
//   overwrite     one key written twice (k→v, later k→v′): what each memory returns for k
//   distill       Hedgehog learning to mimic softmax (lab.distiller), with the matrices and readouts it moves

import { applyGates } from './gates.mjs';

/** The scaling view's memory budget: the bytes one measurement may take (inputs, outputs, workspace). */
export const SCALING_DEFAULT_BUDGET = 64 * 2 ** 20;
/** The largest n the scaling view tries (the library's AV_MAX_N is 16384). */
export const SCALING_MAX_N = 16384;

const now = () => (typeof performance !== 'undefined' ? performance.now() : Date.now());

/** Bytes of float32 storage of the state (r×dv + r) and of softmax's key/value cache after t tokens. */
export function memoryBytes(r, d, dv, t, window = 0) {
  const cached = window > 0 ? Math.min(t, window) : t;
  return { state: 4 * (r * dv + r), cache: 4 * cached * (d + dv) };
}

/** A gate at or below this log-gate counts as a reset (docs/gated.md: a reset is g = −30; ln 1e-6 ≈ −13.8). */
export const RESET_BELOW = Math.log(1e-6);

const norm = (x) => { let s = 0; for (const v of x) s += v * v; return Math.sqrt(s); };

/**
 * The gated part of a frame (docs/mechanisms.md, "The gated families"): token i's gate α_i (1 or d values),
 * β_i, k̃_i, which rows the gate cleared (a reset: α ≤ 1e-6), the norms of S before and after the token; for
 * gdn and kda the written value u_i = β_i(v_i − S′ᵀk̃_i), S′ = Diag(α_i)S_{i−1}; for dplr the read x_i =
 * S_{i−1}ᵀa_i and b_i (the low-rank write b_i x_iᵀ); for fox the cache's biases.
 */
function gatedFrame(stepper, frame, i) {
  const { d, dv, family } = stepper;
  const gi = stepper.gate(i);
  frame.family = family;
  frame.alpha = gi.alpha;
  frame.gLog = gi.g;
  frame.beta = gi.beta;
  frame.kt = stepper.kt(i);
  frame.resetRows = [];
  for (let c = 0; c < gi.g.length; c++) if (gi.g[c] <= RESET_BELOW) frame.resetRows.push(c);
  // a scalar gate acts on every row
  frame.reset = frame.resetRows.length > 0;
  if (frame.reset && gi.g.length === 1) frame.resetRows = Array.from({ length: d }, (_, c) => c);
  if (stepper.kind === 'cache') { frame.bias = stepper.bias(frame.t); return; }
  const P = stepper.Sprev;
  frame.Sprev = Float64Array.from(P);
  frame.prevNorm = norm(P);
  frame.stateNorm = norm(frame.S);
  const al = (c) => gi.alpha.length === 1 ? gi.alpha[0] : gi.alpha[c];
  if (family === 'gdn' || family === 'kda') {
    const u = new Float64Array(dv);
    for (let e = 0; e < dv; e++) {
      let s = 0;
      for (let c = 0; c < d; c++) s += al(c) * P[c * dv + e] * frame.kt[c];
      u[e] = gi.beta * (frame.v[e] - s);
    }
    frame.u = u;
  }
  if (family === 'dplr' && gi.a) {
    const x = new Float64Array(dv);
    for (let e = 0; e < dv; e++) { let s = 0; for (let c = 0; c < d; c++) s += P[c * dv + e] * gi.a[c]; x[e] = s; }
    frame.x = x;
    frame.a = gi.a;
    frame.b = gi.b;
  }
}

/**
 * The frame of token t (1-based count of tokens read): what the stepper shows after reading t tokens.
 * stepper: lab.stepper(...).stepper. Returns plain typed arrays (copies), ready to post.
 */
export function stepFrame(stepper, t, window = 0) {
  const status = stepper.seek(t);
  const { kind, r, d, dv, n } = stepper;
  const at = stepper.t, i = at - 1;
  const frame = { kind, r, d, dv, n, t: at, status, window };
  const mem = memoryBytes(kind === 'state' ? r : 0, d, dv, at, window);
  frame.stateBytes = kind === 'state' ? mem.state : kind === 'gated' ? 4 * d * dv : null; // gated: S only, no z
  frame.cacheBytes = mem.cache;
  if (at === 0) return frame;
  frame.v = stepper.v(i);
  frame.k = stepper.K(i);
  frame.o = Float32Array.from(stepper.o);
  frame.row = Float64Array.from(stepper.row(i));
  let diff = 0, mx = 0;
  for (let c = 0; c < dv; c++) {
    diff = Math.max(diff, Math.abs(frame.o[c] - frame.row[c]));
    mx = Math.max(mx, Math.abs(frame.row[c]));
  }
  frame.diff = diff;
  frame.rowMax = mx;
  if (kind === 'gated') frame.S = Float64Array.from(stepper.S);
  if (stepper.family) gatedFrame(stepper, frame, i);
  if (kind === 'state') {
    frame.phiK = stepper.phiK(i);
    frame.phiQ = stepper.phiQ(i);
    frame.S = Float64Array.from(stepper.S);
    frame.z = Float64Array.from(stepper.z);
  }
  return frame;
}

/** Median of a few timed runs of fn (ms): repeated until 3 runs and 40 ms, at most 9 runs. */
function timeIt(fn) {
  const times = [];
  let total = 0;
  while (times.length < 9 && (times.length < 3 || total < 40)) {
    const t0 = now();
    const st = fn();
    const ms = now() - t0;
    if (st < 0) return { ms: null, status: st };
    times.push(ms);
    total += ms;
  }
  times.sort((a, b) => a - b);
  return { ms: times[times.length >> 1], status: 0 };
}

/** The bytes a path's call takes at n (inputs, output, the matrix where formed, the workspace), or null. */
export function pathBytes(av, knobs, path, n, d) {
  const lab = av.lab(n, d, d);
  try {
    if (lab.status !== 0) return null;
    if (lab.applyKnobs(knobs).status) return null;
    const ex = av.exports;
    const inputs = 3 * n * d * 4, out = n * d * 4;
    const work = path === 'quadratic' ? ex.av_attend_work(lab.prm, n, d, d) >>> 0
      : ex[`av_${path}_work`](lab.prm, n, d, d) >>> 0;
    if (work === 0) return null;
    return inputs + out + work + (path === 'quadratic' ? n * n * 4 : 0);
  } finally { lab.free(); }
}

/**
 * The scaling measurements, one point at a time (a generator: the caller yields to events between points
 * and stops when cancelled). For each n = 64, 128, … ≤ maxN and each path — 'quadratic' (softmax's M·V:
 * the matrix formed), 'linear' (the variant's linear-time path) and 'chunkwise' (where the variant has
 * it) — the bytes are known before the call (pathBytes) and a path stops for good at the first n whose
 * bytes exceed the budget. Yields {n, path, ms, bytes, status} or {n, path, skipped: 'budget' | 'none'}.
 */
export function* scalingRun(av, { knobs, d = 64, budget = SCALING_DEFAULT_BUDGET, maxN = SCALING_MAX_N, seed = 1 }) {
  const causal = av.variant(knobs.variant).recurrent && knobs.causal;
  const paths = [['quadratic', { variant: av.referenceVariant, causal: !!knobs.causal, scale: knobs.scale ?? 0 }],
    ['linear', knobs]];
  if (causal && av.variant(knobs.variant).chunkwise !== false) paths.push(['chunkwise', knobs]);
  const stopped = new Set();
  for (let n = 64; n <= maxN; n *= 2) {
    for (const [path, k] of paths) {
      if (stopped.has(path)) continue;
      const bytes = pathBytes(av, k, path, n, d);
      if (bytes === null) { stopped.add(path); yield { n, path, skipped: 'none' }; continue; }
      if (bytes > budget) { stopped.add(path); yield { n, path, bytes, skipped: 'budget' }; continue; }
      const lab = av.lab(n, d, d);
      try {
        lab.generate('gaussian', 1, seed);
        const call = path === 'quadratic' ? () => lab.attend(k).status : () => lab.path(k, path).status;
        const { ms, status } = timeIt(call);
        if (ms === null) { stopped.add(path); yield { n, path, skipped: 'none', status }; continue; }
        yield { n, path, ms, bytes, status };
      } finally { lab.free(); }
    }
    if (stopped.size === paths.length) return;
  }
}

/** The operation-count crossover of the variant's linear path and softmax's quadratic path (the cost line's
 *  one meaning, render/readouts.mjs costLine): the n where their madds meet (about the feature dimension r
 *  for the kernel variants), from av_cost_path; null without a linear path. */
export function crossover(av, knobs, d = 64) {
  const fd = av.featureDim(knobs, 1024, d);
  let prev = null;
  for (let n = 2; n <= SCALING_MAX_N; n = Math.ceil(n * 1.1)) {
    const lab = av.lab(n, d, d, false);
    let c;
    let soft;
    try { c = lab.cost(knobs); soft = lab.cost({ variant: av.referenceVariant }); } finally { lab.free(); }
    if (!c || c.linear_madds === null || !soft) return { n: null, r: fd.r };
    if (c.linear_madds <= soft.quad_madds) return { n: prev === null ? n : n, r: fd.r };
    prev = n;
  }
  return { n: null, r: fd.r };
}

/**
 * A gated memory's gates for N pairs (opts.setup of av.recall): the request's gate spec (compute/gates.mjs
 * applyGates; reset positions at or past N dropped), made for the N pairs as for N tokens. `seen` gets the
 * last reset's position (a token whose every channel's log-gate is ≤ RESET_BELOW), or null.
 */
function gatesSetup(gates, seen) {
  return (lab) => {
    // K-projected gates and the reader's files belong to the lab's inputs, not to the protocol's random pairs
    if (['projection', 'mamba2', 'file'].includes(gates.kind) || ['projection', 'file'].includes(gates.beta?.kind)) {
      return { status: lab.av.STATUS.ERR_KNOB, message: 'gates made from K or read from a file belong to the lab\'s inputs, not to the protocol\'s pairs: pick a constant, uniform, resets or slow gate' };
    }
    const spec = Array.isArray(gates.at) ? { ...gates, at: gates.at.filter((p) => p < lab.n) } : gates;
    const r = applyGates(lab, spec, null);
    if (r.status < 0) return r;
    const held = lab.gates(), ch = held?.channels || 1;
    seen.reset = null;
    for (let t = 1; held?.g && t < lab.n; t++) {
      let all = true;
      for (let c = 0; c < ch; c++) all &&= held.g[t * ch + c] <= RESET_BELOW;
      if (all) seen.reset = t;
    }
    return r;
  };
}

/** One memory's recall at N pairs of dimension d: a point {memory, N, d, mean, min, max, status, message} and,
 *  with gates that reset, forgotten: {at (the last reset), before, after: the mean error of the pairs written
 *  before it and from it on}. m: {id, knobs, gates (a request's gate spec, or absent)}. */
export function recallPoint(av, m, N, d, seeds) {
  const seen = { reset: null };
  const r = av.recall(m.knobs, { pairs: N, d, seeds, setup: m.gates ? gatesSetup(m.gates, seen) : undefined });
  const point = { memory: m.id, N, d, mean: r.mean, min: r.min, max: r.max, status: r.status, message: r.message };
  if (seen.reset !== null && r.pairMean) {
    const mean = (a, b) => { let s = 0; for (let i = a; i < b; i++) s += r.pairMean[i]; return s / (b - a); };
    point.forgotten = { at: seen.reset, before: mean(0, seen.reset), after: mean(seen.reset, N) };
  }
  return point;
}

/**
 * Recall error against N for each memory (a generator of points: {memory, N, d, mean, min, max, status}).
 * memories: [{id, knobs, gates?}]; Ns: pair counts; d: the dimension; seeds: draws per point.
 */
export function* recallCurve(av, { memories, Ns, d, seeds = 3 }) {
  for (const N of Ns)
    for (const m of memories) yield recallPoint(av, m, N, d, seeds);
}

/** The same against d at a fixed N. */
export function* recallAgainstD(av, { memories, N, ds, seeds = 3 }) {
  for (const d of ds)
    for (const m of memories) yield recallPoint(av, m, N, d, seeds);
}

/**
 * One key overwritten: N protocol pairs (draw `seed`), then pair 0's key again with a new value v′. What
 * each memory returns for that key, read after the last write: errNew against v′ (the newest value) and
 * errOld against v (the same key's read scored against its first value). A memory that overwrites has
 * errNew ≈ 0; one that adds returns a blend, far from both.
 */
export function overwrite(av, { memories, N = 8, d = 32, seed = 0 }) {
  const { K, V } = av.recallDraw(N + 1, d, seed);
  K.copyWithin(N * d, 0, d); // the last pair: key 0 again, with the last draw's value as v′
  return memories.map((m) => {
    const r = av.recall(m.knobs, { K, V, pairs: N + 1, d, setup: m.gates ? gatesSetup(m.gates, {}) : undefined });
    if (!r.errors) return { memory: m.id, status: r.status, message: r.message };
    return { memory: m.id, status: r.status, errNew: r.errors[N], errOld: r.errors[0] };
  });
}

/**
 * Hedgehog's training, a chunk at a time: distiller from lab.distiller. Returns {loss: Float64Array (per
 * step), lossNow, W (Float32Array)}; the caller draws the matrix of knobs {variant: 'hedgehog', hedgehog_w: W}.
 */
export function distillChunk(distiller, steps, lr) {
  const r = distiller.steps(steps, lr);
  return { status: r.status, message: r.message, loss: r.loss, lossNow: distiller.loss(), W: distiller.W, t: distiller.t };
}

/** Mean row KL(A ‖ M) over allowed entries (M's rows normalised), as the distillation's loss defines it. */
export function meanRowKL(A, M, n, causal) {
  let kl = 0;
  for (let i = 0; i < n; i++) {
    const jn = causal ? i + 1 : n;
    let s = 0;
    for (let j = 0; j < jn; j++) s += M[i * n + j];
    for (let j = 0; j < jn; j++) {
      const a = A[i * n + j];
      if (a > 0) kl += a * (Math.log(a) - Math.log(M[i * n + j] / s));
    }
  }
  return kl / n;
}
