// gates.mjs: the gated families' gates as inputs of the page (docs/gated.md, docs/page.md "Gates"): the link
// keys of their generator and its knobs, and the request's gate spec (what web/compute/engine.mjs hands the
// lab's generateGates, src/gates.c). Pure: no DOM.
//
// The gate is an input like Q, K, V: a generator (constant, uniform, resets, slow, projection of K, Mamba-2's
// Δ) or the reader's own gates.npy (`gate=file`, with src=file), with one gate per token for the scalar
// families and one per token and channel for the per-channel ones (gla, kda, dplr). The constant gate is the
// registry's knob `decay` (α = γ: the library's own constant case, as the CLI's --decay), which is also the
// open gate between resets; the other generators make it moot, so its control hides. gdn and kda also read a
// write strength per token (β in fla, η on the page): constant (the registry's knob `beta`), uniform, or a
// projection of K.
import { enLabel as L, enOptions as optionLabels } from '../i18n/i18n.mjs';
import { GATED_CLASS } from '../compute/gates.mjs';

export { GATED_CLASS };

/** The gate generators of src/gates.c (av_gate_generator_name), and the reader's own gates.npy. */
export const GATE_KINDS = ['constant', 'uniform', 'resets', 'slow', 'projection', 'mamba2', 'file'];
/** The generators of β (av_betas_*), and the reader's own betas.npy. */
export const BETA_KINDS = ['constant', 'uniform', 'projection', 'file'];
/** At most this many chosen reset positions in a link. */
const MAX_POSITIONS = 64;

/** The gated families whose gate is one per token and channel (docs/gated.md): the registry's `gate` field
 *  where it has one ('channel'), else these (gla, kda, dplr). */
const PER_CHANNEL = new Set(['gla', 'kda', 'dplr']);
export const perChannel = (row) => (row.gate ? row.gate === 'channel' : PER_CHANNEL.has(row.name));
/** The family with read and write vectors a, b (dplr): its `ab` generator, RWKV-7's construction from K. */
const AB_FAMILIES = new Set(['dplr']);
/** Where dplr's a, b come from: none (a = b = 0: gla), RWKV-7's (a = −κ̂, b = κ̂ ⊙ a_icl from K), the reader's a.npy, b.npy. */
export const AB_KINDS = ['zero', 'rwkv7', 'file'];

/** The generators that read the registry's `decay` as their α (the others make it moot: its control hides). */
const DECAY_KINDS = ['constant', 'resets'];
const ALPHA_STOPS = [0.5, 0.7, 0.8, 0.9, 0.95, 0.97, 0.98, 0.99, 0.995, 0.999, 1];
const BETA_STOPS = [0.05, 0.1, 0.2, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75, 2];
const is = (...kinds) => (st) => kinds.includes(st.gate);

/**
 * A list of token positions: "5, 20,41" → "5,20,41" (sorted, each once, integers ≥ 0, at most 64). {value, bad}:
 * bad lists the items that are not such integers (dropped). A position ≥ n is kept in the state (a larger n
 * restores it) and left out of the request.
 */
export function positionsValue(raw) {
  const items = String(raw ?? '').split(',').map((x) => x.trim()).filter(Boolean);
  const ok = [], bad = [];
  for (const x of items) {
    if (/^\d{1,5}$/.test(x)) ok.push(Number(x)); else bad.push(x.slice(0, 20));
  }
  const value = [...new Set(ok)].sort((a, b) => a - b).slice(0, MAX_POSITIONS);
  return { value: value.join(','), bad };
}
/** The positions of a value (positionsValue's), below n. */
export const positionsOf = (value, n = Infinity) => (value ? String(value).split(',').map(Number).filter((t) => t < n) : []);

/**
 * The schema entries of the gates, for the gated variants of this registry (`gated`: their names; `betas`:
 * those that read a β per token). Stages: the kind, the seed and Mamba-2's knobs change K (k = Δ·B), so they
 * invalidate the inputs; the others the matrix only.
 */
export function gateEntries(gated, betas) {
  const common = { group: 'variant', variants: gated };
  const abs = gated.filter((v) => AB_FAMILIES.has(v));
  const beta = { group: 'variant', variants: betas, stage: 'matrix' };
  const betaIs = (...kinds) => (st) => kinds.includes(st.beta_gen);
  return [
    { name: 'gate', type: 'enum', options: GATE_KINDS, optionLabels: optionLabels('gate', GATE_KINDS), default: 'constant', label: L('gate'), ...common, stage: 'inputs' },
    { name: 'gate_lo', type: 'float', default: 0.9, min: 0.001, max: 1, step: 0.001, values: ALPHA_STOPS, label: L('gate_lo'), ...common, stage: 'matrix', when: is('uniform', 'slow') },
    { name: 'gate_hi', type: 'float', default: 1, min: 0.001, max: 1, step: 0.001, values: ALPHA_STOPS, label: L('gate_hi'), ...common, stage: 'matrix', when: is('uniform', 'slow') },
    { name: 'gate_period', type: 'int', default: 64, min: 0, max: 4096, values: [0, 4, 8, 16, 24, 32, 48, 64, 96, 128, 256, 512, 1024, 4096], label: L('gate_period'), ...common, stage: 'matrix', when: is('resets') },
    { name: 'gate_at', type: 'positions', default: '', label: L('gate_at'), ...common, stage: 'matrix', control: 'text', when: is('resets') },
    { name: 'gate_rate', type: 'float', default: 0, min: 0, max: 1, step: 0.005, values: [0, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1], label: L('gate_rate'), ...common, stage: 'matrix', when: is('resets') },
    { name: 'gate_wave', type: 'float', default: 64, min: 2, max: 4096, step: 1, values: [2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096], label: L('gate_wave'), ...common, stage: 'matrix', when: is('slow') },
    { name: 'gate_A', type: 'float', default: -1, min: -16, max: -0.01, step: 0.01, label: L('gate_A'), ...common, stage: 'inputs', when: is('mamba2') },
    { name: 'gate_dt', type: 'float', default: 0.05, min: 0.001, max: 1, step: 0.001, values: [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1], label: L('gate_dt'), ...common, stage: 'inputs', when: is('mamba2') },
    { name: 'gate_seed', type: 'int', default: 1, min: 0, max: 4294967295, label: L('gate_seed'), ...common, stage: 'inputs', control: 'number', when: is('uniform', 'resets', 'slow', 'projection', 'mamba2') },
    { name: 'beta_gen', type: 'enum', options: BETA_KINDS, optionLabels: optionLabels('beta_gen', BETA_KINDS), default: 'constant', label: L('beta_gen'), ...beta },
    { name: 'beta_lo', type: 'float', default: 0.2, min: 0.01, max: 2, step: 0.01, values: BETA_STOPS, label: L('beta_lo'), ...beta, when: betaIs('uniform') },
    { name: 'beta_hi', type: 'float', default: 1, min: 0.01, max: 2, step: 0.01, values: BETA_STOPS, label: L('beta_hi'), ...beta, when: betaIs('uniform', 'projection') },
    { name: 'beta_seed', type: 'int', default: 1, min: 0, max: 4294967295, label: L('beta_seed'), ...beta, control: 'number', when: betaIs('uniform', 'projection') },
    { name: 'dplr_ab', type: 'enum', options: AB_KINDS, optionLabels: optionLabels('dplr_ab', AB_KINDS), default: 'zero', label: L('dplr_ab'), group: 'variant', variants: abs, stage: 'matrix' },
    { name: 'dplr_icl', type: 'float', default: 0.5, min: 0.01, max: 1, step: 0.01, label: L('dplr_icl'), group: 'variant', variants: abs, stage: 'matrix', when: (st) => st.dplr_ab === 'rwkv7' },
  ];
}

/**
 * The `when` a registry knob's entry takes beside the gates (state.mjs applies it to the entry's own): the
 * constant gate `decay` shows for the generators that read it, the constant `beta` while β is constant; null
 * for the other knobs. `gated`, `betas`: as gateEntries.
 */
export function gateKnobWhen(knob, gated, betas) {
  if (knob === 'decay') return (st) => !gated.includes(st.variant) || DECAY_KINDS.includes(st.gate);
  if (knob === 'beta') return (st) => !betas.includes(st.variant) || st.beta_gen === 'constant';
  return null;
}

/**
 * The request's gates for a state (null for a variant outside the gated families): {kind, perChannel, the
 * generator's own knobs, beta: null | {kind, …}}: only the knobs the generator reads, so a knob of another
 * generator changes no request. `knobs`: knobsOf's, whose `decay` is the constant and open gate α and whose
 * `beta` the constant β. A range given upside down (lo above hi) is taken in order.
 */
export function gateSpecOf(st, row, knobs) {
  if (row.class !== GATED_CLASS) return null;
  const kind = GATE_KINDS.includes(st.gate) ? st.gate : 'constant';
  const lo = Math.min(st.gate_lo, st.gate_hi), hi = Math.max(st.gate_lo, st.gate_hi);
  const spec = { kind, perChannel: perChannel(row) };
  if (kind === 'constant') spec.alpha = knobs.decay;
  else if (kind === 'uniform') Object.assign(spec, { lo, hi, seed: st.gate_seed });
  else if (kind === 'resets') {
    Object.assign(spec, { alpha: knobs.decay, period: st.gate_period, at: positionsOf(st.gate_at, st.n), rate: st.gate_rate });
    if (st.gate_rate > 0) spec.seed = st.gate_seed;
  } else if (kind === 'slow') Object.assign(spec, { lo, hi, wavelength: st.gate_wave, seed: st.gate_seed });
  else if (kind === 'projection') spec.seed = st.gate_seed;
  else if (kind === 'mamba2') Object.assign(spec, { A: st.gate_A, dt: st.gate_dt, seed: st.gate_seed });
  if (AB_FAMILIES.has(row.name) && st.dplr_ab !== 'zero') spec.ab = st.dplr_ab === 'rwkv7' ? { kind: 'rwkv7', icl: st.dplr_icl } : { kind: 'file' };
  spec.beta = null;
  if (row.knobs.includes('beta')) {
    const bk = BETA_KINDS.includes(st.beta_gen) ? st.beta_gen : 'constant';
    const blo = Math.min(st.beta_lo, st.beta_hi), bhi = Math.max(st.beta_lo, st.beta_hi);
    spec.beta = bk === 'constant' ? { kind: bk, value: knobs.beta }
      : bk === 'uniform' ? { kind: bk, lo: blo, hi: bhi, seed: st.beta_seed }
        : bk === 'projection' ? { kind: bk, hi: st.beta_hi, seed: st.beta_seed } : { kind: bk };
  }
  return spec;
}

/**
 * "Forget at sentence ends": the reset positions after each token that ends a sentence (its piece ends in
 * . ! ? or their CJK forms, closing quotes and spaces aside), for the link's gate_at: the reset goes on the token
 * AFTER the end, since a token's gate acts before it writes (docs/gated.md). At most 64, all below n.
 */
export function sentenceResets(pieces, n = pieces?.length ?? 0) {
  const out = [];
  for (let t = 0; t + 1 < Math.min(n, pieces?.length ?? 0) && out.length < MAX_POSITIONS; t++) {
    if (/[.!?。！？]["'”’)\]]*\s*$/.test(String(pieces[t]))) out.push(t + 1);
  }
  return out;
}
