// state.mjs: the lab's whole state as one plain object, described by one declarative schema that
// round-trips to the URL hash (`#v=1&variant=focused&p=3&…`). No DOM here: pure functions only.
//
// Every entry: {name, type, default, min, max, step?, values?, options?, label, group, variants?, stage}
//   type     'int' | 'float' | 'bool' | 'enum'
//   values   for a slider that steps through a list (n, d): the state still accepts any in-range int
//   variants the variants whose knob this is (absent: shown for all)
//   stage    the first pipeline stage a change invalidates (see STAGES); later stages follow
//   max      a number, or a function of the state (Linformer's s and Nyström's landmarks go up to n)

export const VERSION = 1;

export const VARIANTS = [
  'softmax', 'elu', 'relu', 'exp', 'efficient', 'focused', 'linformer', 'performer', 'taylor',
  'explimit', 'hedgehog', 'nystrom', 'cosformer',
];
export const VARIANT_LABELS = {
  softmax: 'softmax (reference)', elu: 'linear, φ = elu+1', relu: 'linear, φ = relu',
  exp: 'linear, φ = exp', efficient: 'Efficient Attention', focused: 'focused (FLatten)',
  linformer: 'Linformer', performer: 'Performer FAVOR+', taylor: 'Taylor series of exp',
  explimit: '(1 + s/N)^N', hedgehog: 'Hedgehog (W = I)', nystrom: 'Nyströmformer', cosformer: 'cosFormer',
};
/** Variants that have no causal form (product.md §9). */
export const NO_CAUSAL = new Set(['efficient', 'linformer', 'nystrom']);
export const GENERATORS = ['gaussian', 'clustered', 'local', 'lowrank', 'sink'];
export const GENERATOR_LABELS = {
  gaussian: 'Gaussian', clustered: 'clustered keys', local: 'local / positional', lowrank: 'planted low rank',
  sink: 'attention sink',
};

/** Pipeline stages, in order: a change at one stage invalidates it and every later one. */
export const STAGES = ['inputs', 'reference', 'matrix', 'readouts', 'display'];

const N_VALUES = [16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096];
const D_VALUES = [4, 8, 16, 24, 32, 48, 64, 96, 128, 256];

export const SCHEMA = [
  // input
  { name: 'gen', type: 'enum', options: GENERATORS, default: 'gaussian', label: 'generator', group: 'input', stage: 'inputs' },
  { name: 'seed', type: 'int', default: 1, min: 0, max: 4294967295, label: 'seed', group: 'input', stage: 'inputs' },
  { name: 'n', type: 'int', default: 256, min: 16, max: 4096, values: N_VALUES, label: 'n (tokens)', group: 'input', stage: 'inputs' },
  { name: 'd', type: 'int', default: 64, min: 4, max: 256, values: D_VALUES, label: 'd (head dim)', group: 'input', stage: 'inputs' },
  { name: 'std', type: 'float', default: 1, min: 0.1, max: 4, step: 0.05, label: 'std of Q, K', group: 'input', stage: 'inputs' },
  { name: 'scale', type: 'float', default: 1, min: 0.05, max: 4, step: 0.05, label: 'logit scale ×1/√d', group: 'input', stage: 'reference' },
  { name: 'causal', type: 'bool', default: false, label: 'causal mask', group: 'input', stage: 'reference' },
  // variant and its knobs
  { name: 'variant', type: 'enum', options: VARIANTS, default: 'focused', label: 'variant', group: 'variant', stage: 'matrix' },
  { name: 'p', type: 'float', default: 3, min: 1, max: 10, step: 0.1, label: 'focusing power p', group: 'variant', variants: ['focused'], stage: 'matrix' },
  { name: 'dwc', type: 'bool', default: false, label: 'DWC (depthwise conv on V)', group: 'variant', variants: ['focused'], stage: 'matrix' },
  { name: 'dwc_k', type: 'int', default: 5, min: 1, max: 63, step: 2, label: 'DWC kernel size', group: 'variant', variants: ['focused'], when: (st) => st.dwc, stage: 'matrix' },
  { name: 's', type: 'int', default: 64, min: 1, max: (st) => st.n, label: 'projected length s', group: 'variant', variants: ['linformer'], stage: 'matrix' },
  { name: 'ef_kind', type: 'enum', options: ['gaussian', 'mean'], default: 'gaussian', label: 'E/F kind', group: 'variant', variants: ['linformer'], stage: 'matrix' },
  { name: 'ef_shared', type: 'bool', default: false, label: 'share E = F', group: 'variant', variants: ['linformer'], stage: 'matrix' },
  { name: 'm', type: 'int', default: 256, min: 1, max: 4096, values: [1, 2, 4, 8, 16, 32, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 2048, 4096], label: 'random features m', group: 'variant', variants: ['performer'], stage: 'matrix' },
  { name: 'orthogonal', type: 'bool', default: true, label: 'orthogonal features', group: 'variant', variants: ['performer'], stage: 'matrix' },
  { name: 'rseed', type: 'int', default: 1, min: 0, max: 4294967295, label: 'feature seed', group: 'variant', variants: ['performer', 'linformer', 'focused'], stage: 'matrix' },
  { name: 'order', type: 'int', default: 2, min: 1, max: 4, label: 'Taylor order', group: 'variant', variants: ['taylor'], stage: 'matrix' },
  { name: 'N', type: 'int', default: 2, min: 1, max: 64, label: 'power N', group: 'variant', variants: ['explimit'], stage: 'matrix' },
  { name: 'landmarks', type: 'int', default: 64, min: 1, max: (st) => st.n, label: 'landmarks', group: 'variant', variants: ['nystrom'], stage: 'matrix' },
  { name: 'iters', type: 'int', default: 6, min: 0, max: 30, label: 'pinv iterations', group: 'variant', variants: ['nystrom'], stage: 'matrix' },
  // readout settings and display
  { name: 'tau', type: 'float', default: 0.1, min: 0.01, max: 1, step: 0.01, label: 'sparsity τ', group: 'readout', stage: 'readouts' },
  { name: 'rtol', type: 'float', default: -3, min: -7, max: -1, step: 0.5, label: 'rank tol. log₁₀', group: 'readout', stage: 'display' },
  { name: 'ds', type: 'enum', options: ['mean', 'max'], default: 'mean', label: 'downsample by', group: 'readout', stage: 'readouts' },
  { name: 'theme', type: 'enum', options: ['auto', 'light', 'dark'], default: 'auto', label: 'theme', group: 'view', stage: 'display' },
];

/** Schema entries by name. No prototype: `BY_NAME.toString` is undefined, like any name not in SCHEMA. */
export const BY_NAME = Object.freeze(Object.assign(Object.create(null), Object.fromEntries(SCHEMA.map((e) => [e.name, e]))));

/** The schema entry named `name` (a user-given string: a link's key), or null. Own entries only. */
export function entryOf(name) {
  return typeof name === 'string' && Object.hasOwn(BY_NAME, name) ? BY_NAME[name] : null;
}

/** The state with every default. */
export function defaults() {
  return Object.fromEntries(SCHEMA.map((e) => [e.name, e.default]));
}

/** Upper bound of an entry in this state (entries whose max depends on n). */
export function maxOf(entry, st) {
  return typeof entry.max === 'function' ? entry.max(st) : entry.max;
}

/** Whether a knob is shown for the state's variant. */
export function applies(entry, st) {
  return (!entry.variants || entry.variants.includes(st.variant)) && (!entry.when || entry.when(st));
}

/**
 * Coerce one raw value (string from the URL, number or bool from a control) to the entry's type,
 * within range. Returns {value, problem}: problem is a sentence when the raw value was bad or clamped.
 */
export function coerce(entry, raw, st) {
  const bad = (why) => ({ value: st[entry.name] ?? entry.default, problem: `${entry.name}: ${why}` });
  if (entry.type === 'bool') {
    if (raw === true || raw === '1' || raw === 'true' || raw === 1) return { value: true, problem: null };
    if (raw === false || raw === '0' || raw === 'false' || raw === 0) return { value: false, problem: null };
    return bad(`"${String(raw).slice(0, 40)}" is not 0 or 1`);
  }
  if (entry.type === 'enum') {
    const s = String(raw);
    return entry.options.includes(s) ? { value: s, problem: null } : bad(`"${s.slice(0, 40)}" is not one of ${entry.options.join(', ')}`);
  }
  const x = typeof raw === 'number' ? raw : Number(String(raw).trim() === '' ? NaN : raw);
  if (!Number.isFinite(x)) return bad(`"${String(raw).slice(0, 40)}" is not a number`);
  let v = entry.type === 'int' ? Math.round(x) : x;
  if (entry.type === 'int' && entry.step === 2 && (v - entry.min) % 2 !== 0) v += 1; // odd kernel sizes
  const lo = entry.min;
  const hi = maxOf(entry, st);
  if (v < lo || v > hi) {
    const c = Math.min(hi, Math.max(lo, v));
    return { value: c, problem: `${entry.name}: ${x} is outside ${lo}…${hi}, using ${c}` };
  }
  return { value: v, problem: null };
}

/** Bring every dependent bound in line after a change (s, landmarks ≤ n). Returns a new state. */
export function normalise(st) {
  const out = { ...st };
  for (const e of SCHEMA) {
    if (typeof e.max === 'function') {
      const hi = e.max(out);
      if (out[e.name] > hi) out[e.name] = hi;
    }
  }
  return out;
}

/** The URL hash for a state: `v=1` first, then every entry in schema order (a link is exact). */
export function toHash(st) {
  const parts = [`v=${VERSION}`];
  for (const e of SCHEMA) {
    const v = st[e.name];
    const s = e.type === 'bool' ? (v ? '1' : '0') : e.type === 'float' ? String(+Number(v).toPrecision(8)) : String(v);
    parts.push(`${e.name}=${encodeURIComponent(s)}`);
  }
  return parts.join('&');
}

/**
 * Parse a URL hash (with or without '#'). Returns {state, problems}: unknown keys, bad values and
 * versions are reported as sentences and otherwise ignored. Values are data, never markup.
 */
export function fromHash(hash) {
  const problems = [];
  let st = defaults();
  const text = String(hash || '').replace(/^#/, '');
  if (!text) return { state: st, problems };
  const pairs = [];
  for (const part of text.split('&')) {
    if (!part) continue;
    const i = part.indexOf('=');
    let k, v;
    try {
      k = decodeURIComponent(i < 0 ? part : part.slice(0, i));
      v = decodeURIComponent(i < 0 ? '' : part.slice(i + 1));
    } catch {
      problems.push(`${part.slice(0, 40)}: malformed escape in the link`);
      continue;
    }
    pairs.push([k, v]);
  }
  const ver = pairs.find(([k]) => k === 'v');
  if (ver && ver[1] !== String(VERSION)) problems.push(`v: link version ${ver[1].slice(0, 20)} is not ${VERSION}; reading what is understood`);
  // n first: other bounds (s, landmarks) depend on it
  pairs.sort(([a], [b]) => (b === 'n') - (a === 'n'));
  const unknown = new Set();
  for (const [k, v] of pairs) {
    if (k === 'v') continue;
    const e = entryOf(k);
    if (!e) { unknown.add(k.slice(0, 40)); continue; }
    const { value, problem } = coerce(e, v, st);
    if (problem) problems.push(problem);
    st = { ...st, [e.name]: value };
  }
  if (unknown.size) problems.push(unknownSentence([...unknown]));
  return { state: normalise(st), problems: capList(problems) };
}

// A link is untrusted and may be long: the notice names a handful and counts the rest.
const NAMED_UNKNOWN = 5;
const MAX_PROBLEMS = 8;
const count = (x) => x.toLocaleString('en-US'); // 12,480

function unknownSentence(keys) {
  if (keys.length === 1) return `unknown parameter "${keys[0]}" ignored`;
  const named = keys.slice(0, NAMED_UNKNOWN).map((k) => `"${k}"`).join(', ');
  const rest = keys.length - NAMED_UNKNOWN;
  return `${count(keys.length)} unknown parameters ignored: ${named}${rest > 0 ? `, … and ${count(rest)} more` : ''}`;
}

function capList(problems) {
  if (problems.length <= MAX_PROBLEMS) return problems;
  const keep = problems.slice(0, MAX_PROBLEMS - 1);
  keep.push(`… and ${count(problems.length - keep.length)} more problems in the link`);
  return keep;
}

/** Names whose values differ between two states. */
export function changedKeys(a, b) {
  return SCHEMA.filter((e) => a[e.name] !== b[e.name]).map((e) => e.name);
}

/** The earliest pipeline stage that a set of changed keys invalidates (or null when none). */
export function firstDirtyStage(keys) {
  let best = STAGES.length;
  for (const k of keys) {
    const e = entryOf(k);
    if (e) best = Math.min(best, STAGES.indexOf(e.stage));
  }
  return best < STAGES.length ? STAGES[best] : null;
}

/** Whether `stage` must be recomputed when `first` is the earliest dirty stage. */
export function stageDirty(first, stage) {
  return first !== null && STAGES.indexOf(stage) >= STAGES.indexOf(first);
}

/** The knobs object the loader's lab takes (web/attnviz.mjs), for this state. */
export function knobsOf(st) {
  const causal = st.causal && !NO_CAUSAL.has(st.variant) && !(st.variant === 'focused' && st.dwc);
  return {
    variant: st.variant, causal, scale: st.scale / Math.sqrt(st.d), p: st.p,
    dwc_kernel: st.variant === 'focused' && st.dwc ? Math.min(st.dwc_k, st.n - ((st.n + 1) % 2)) : 0,
    s: Math.min(st.s, st.n), ef_kind: st.ef_kind, ef_shared: st.ef_shared, m: st.m,
    orthogonal: st.orthogonal, seed: st.rseed, order: st.order, N: st.N,
    landmarks: Math.min(st.landmarks, st.n), iters: st.iters === 0 ? -1 : st.iters,
  };
}

/** Whether the causal toggle is honoured for this variant (the page says when it is not). */
export function causalNote(st) {
  if (!st.causal) return null;
  if (NO_CAUSAL.has(st.variant)) return `${VARIANT_LABELS[st.variant]} has no causal form: shown non-causal`;
  if (st.variant === 'focused' && st.dwc) return 'focused + DWC has no causal form: shown non-causal';
  return null;
}

/** The variant's rank ceiling (feature dimension, s, m, landmarks) or null, non-causal only. */
export function rankCeiling(st) {
  const k = knobsOf(st);
  if (k.causal) return null;
  const d = st.d;
  const pow = (b, e) => Math.pow(b, e);
  const table = {
    elu: d, relu: d, exp: d, efficient: d, focused: st.dwc ? null : d, linformer: k.s, performer: st.m,
    taylor: Array.from({ length: st.order + 1 }, (_, i) => pow(d, i)).reduce((a, b) => a + b, 0),
    explimit: pow(d + 1, st.N), hedgehog: 2 * d, nystrom: k.landmarks, cosformer: 2 * d, softmax: null,
  };
  const r = Object.hasOwn(table, st.variant) ? table[st.variant] : null;
  return r == null ? null : Math.min(r, st.n);
}

/** Feature dimension of a kernel variant (for the formula line), or null. */
export function featureDim(st) {
  const d = st.d;
  switch (st.variant) {
    case 'taylor': { let s = 0; for (let i = 0; i <= st.order; i++) s += Math.pow(d, i); return s; }
    case 'explimit': return Math.pow(d + 1, st.N);
    case 'performer': return st.m;
    case 'hedgehog': case 'cosformer': return 2 * d;
    case 'elu': case 'relu': case 'exp': case 'efficient': case 'focused': return d;
    default: return null;
  }
}
