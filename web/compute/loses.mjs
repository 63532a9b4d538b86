// loses.mjs: "what the model loses" (docs/model.md "Swapped attention"), on a Model (web/wasm/model.mjs) in
// the background worker: the measures of a text with chosen heads swapped, the two greedy continuations, the
// sensitivity table, and the distillation of every chosen head (Hedgehog, LoLCATs) with the CLI's schedule
// (`attnviz linearize --distill`: identity start, av_distill steps, lr 0.05), so the page's numbers are the CLI's.
import { STATUS } from '../wasm/loading.mjs';
import { SWAP_PATHS } from '../wasm/model.mjs';

/** The variants whose weights distillation trains (docs/model.md "Attention transfer"). */
export const DISTILLABLE = Object.freeze(['hedgehog', 'lolcats']);

/** Every [layer, head] of a model, layer by layer: what "all heads" swaps. */
export function allHeads(layers, heads) {
  const out = [];
  for (let l = 0; l < layers; l++) for (let h = 0; h < heads; h++) out.push([l, h]);
  return out;
}

/**
 * The index in a and b (generated tokens) of the first token where they differ; null when they are equal
 * or one ends first at the same tokens (the CLI's `first_difference`).
 */
export function firstDifference(a, b) {
  const m = Math.min(a.length, b.length);
  for (let i = 0; i < m; i++) if (a[i] !== b[i]) return i;
  return null;
}

/** The pieces of generated tokens after a prompt (each decoded after the token before it), and their text. */
function after(model, prompt, gen) {
  const pieces = model.pieces([...prompt, ...gen]).slice(prompt.length);
  return { ids: Array.from(gen), text: pieces.join(''), pieces };
}

/** A trained-W map ('l|h' → Float32Array) from the distillation's heads, or null. */
export function wMap(trained) {
  return trained?.length ? new Map(trained.map((t) => [`${t.layer}|${t.head}`, t.W])) : null;
}

// The original's continuation depends only on the model, the prompt and the steps (every head kept: the
// path changes nothing, tests/c check_swap.c), yet each request asked for it: the last one per model is kept.
const originals = new WeakMap();

/** The original model's continuation (model.continueSwapped with no head swapped), the last one reused. */
export function originalContinuation(model, prompt, steps, path) {
  const key = `${steps}|${Array.from(prompt).join(',')}`;
  const kept = originals.get(model);
  if (kept?.key === key) return kept.co;
  const co = model.continueSwapped(prompt, steps, 0, path);
  if (co.ids) originals.set(model, { key, co });
  return co;
}

/**
 * The measures of one text with the heads `swapped` ([[l, h]]) replaced by the variant of `knobs`, by `path`
 * ('matrix' | 'recurrent'), with trained W per head (wMap) when given: {measures, per_position, continuation,
 * sensitivity} as snapshot().loses holds them (docs/inspection.md), or {error} (one sentence). ids: the
 * evaluated text (BOS first); prompt: the continuation's prompt ids; steps: tokens to generate.
 */
export function losesRun(model, { ids, prompt, steps = 32, knobs, swapped, path = 'matrix', W = null, sensitivity = false }) {
  const p = SWAP_PATHS[path];
  if (p === undefined) return { error: `path ${path}: matrix or recurrent` };
  if (ids.length < 2) return { error: `the text is ${ids.length} token: the measures need at least 2 (a prediction of the next)` };
  const prm = model.swapParams(knobs, swapped, W);
  if (prm.status < 0) return { error: prm.message };
  try {
    const o = model.forwardSwapped(ids, 0, p);
    if (!o.logits) return { error: o.message };
    const s = model.forwardSwapped(ids, prm.ptr, p);
    if (!s.logits) return { error: s.message };
    const m = model.measures(o.logits, s.logits, ids);
    if (m.status < 0) return { error: m.message };
    const warnings = [o, s].filter((r) => r.status > 0).map((r) => r.message);
    const co = originalContinuation(model, prompt, steps, p);
    if (!co.ids) return { error: co.message };
    const cs = model.continueSwapped(prompt, steps, prm.ptr, p);
    if (!cs.ids) return { error: cs.message };
    for (const r of [co, cs]) if (r.status > 0) warnings.push(r.message);
    const out = {
      measures: { loss: m.loss, loss_original: m.loss_original, perplexity: m.perplexity, perplexity_original: m.perplexity_original, kl_mean: m.kl_mean, top1_agreement: m.top1_agreement },
      positions: ids.length - 1,
      per_position: { loss: Array.from(m.per_position.loss), loss_original: Array.from(m.per_position.loss_original), kl: Array.from(m.per_position.kl), agree: Array.from(m.per_position.agree) },
      continuation: {
        prompt_ids: Array.from(prompt), steps,
        original: after(model, prompt, co.ids),
        swapped: after(model, prompt, cs.ids),
        first_difference: firstDifference(co.ids, cs.ids),
      },
      sensitivity: null,
      warnings,
    };
    if (sensitivity) {
      const sn = model.sensitivity(ids, prm.ptr, p);
      if (sn.status < 0) return { error: sn.message };
      if (sn.status > 0) warnings.push(sn.message);
      out.sensitivity = { by_layer: sn.byLayer, by_head: sn.byHead };
    }
    return out;
  } finally { prm.free(); }
}

/** Head h's rows of a capture (layers, heads, n, d) as its own n×d array. */
function headRows(X, heads, n, d, l, h) {
  const at = ((l * heads + h) * n) * d;
  return X.subarray(at, at + n * d);
}

/**
 * The row KL of the variant (knobs, with W for Hedgehog's feature map when given) against softmax on one
 * head of a capture: the lab's readout row_kl_mean (`attnviz readouts`' number); null when undefined.
 */
function headKl(av, f, c, l, h, knobs) {
  const n = f.n, d = c.headSize, kvh = Math.floor(h / (c.heads / c.kvHeads));
  const lab = av.lab(n, d, d);
  try {
    if (lab.status) return null;
    lab.Q.set(headRows(f.Q, c.heads, n, d, l, h));
    lab.K.set(headRows(f.K, c.kvHeads, n, d, l, kvh));
    lab.V.set(headRows(f.V, c.kvHeads, n, d, l, kvh));
    const k = { ...knobs, causal: true };
    if (lab.matrix(k).status < 0) return null;
    const r = lab.readouts(k, { sv: null });
    return typeof r.row_kl_mean === 'number' ? r.row_kl_mean : null;
  } finally { lab.free(); }
}

/**
 * Distil every chosen head (a generator: it yields after each chunk of steps so that the worker can see a
 * cancel or a newer request): the training text trainIds through the original model, each head's W from
 * the identity, `steps` steps of av_distill (Adam, lr) against its own softmax. Yields {t, steps, curve}
 * (curve: the mean over the heads of the loss at the start of each step so far); returns {steps, lr, train_n,
 * loss_curve (steps + 1), heads: [{layer, head, train_kl_before, train_kl_after, heldout_kl, heldout_kl_elu}],
 * W: [{layer, head, W: Float32Array}]} or {error}. Held-out: the first evaluated text (evalIds).
 */
export function* distillHeads(model, { trainIds, evalIds, swapped, knobs, steps, lr = 0.05, chunk = 10 }) {
  const av = model.av, c = model.config, d = c.headSize;
  if (!DISTILLABLE.includes(knobs.variant)) return { error: `distillation trains hedgehog or lolcats, not ${knobs.variant}` };
  if (!swapped.length) return { error: 'no head is chosen to distil' };
  const f = model.forward(trainIds);
  if (!f.Q) return { error: f.message };
  const n = f.n, base = { ...knobs, causal: true };
  delete base.hedgehog_w;
  const heads = [];
  try {
    for (const [l, h] of swapped) {
      const lab = av.lab(n, d, d);
      heads.push({ layer: l, head: h, lab, distiller: null, loss: new Float64Array(steps + 1) });
      if (lab.status) return { error: lab.message ?? av.statusString(lab.status) };
      const kvh = Math.floor(h / (c.heads / c.kvHeads));
      lab.Q.set(headRows(f.Q, c.heads, n, d, l, h));
      lab.K.set(headRows(f.K, c.kvHeads, n, d, l, kvh));
      lab.V.set(headRows(f.V, c.kvHeads, n, d, l, kvh));
      const got = lab.distiller(base);
      if (!got.distiller) return { error: `layer ${l} head ${h}: ${got.message}` };
      heads[heads.length - 1].distiller = got.distiller;
    }
    const curve = [];
    for (let t = 0; t < steps; t += chunk) {
      const k = Math.min(chunk, steps - t);
      for (const hd of heads) {
        const r = hd.distiller.steps(k, lr);
        if (!r.loss) return { error: `layer ${hd.layer} head ${hd.head}: ${r.message}` };
        hd.loss.set(r.loss, t);
      }
      for (let s = t; s < t + k; s++) curve.push(heads.reduce((a, hd) => a + hd.loss[s], 0) / heads.length);
      yield { t: t + k, steps, curve };
    }
    for (const hd of heads) hd.loss[steps] = hd.distiller.loss() ?? NaN;
    curve.push(heads.reduce((a, hd) => a + hd.loss[steps], 0) / heads.length);
    const ev = model.forward(evalIds);
    if (!ev.Q) return { error: ev.message };
    const W = heads.map((hd) => ({ layer: hd.layer, head: hd.head, W: hd.distiller.W }));
    const elu = { variant: 'elu', scale: base.scale ?? 0 };
    return {
      steps, lr, train_n: n, loss_curve: curve,
      heads: heads.map((hd, i) => ({
        layer: hd.layer, head: hd.head,
        train_kl_before: hd.loss[0], train_kl_after: hd.loss[steps],
        heldout_kl: headKl(av, ev, c, hd.layer, hd.head, { ...base, hedgehog_w: W[i].W }),
        heldout_kl_elu: headKl(av, ev, c, hd.layer, hd.head, elu),
      })),
      W,
    };
  } finally {
    for (const hd of heads) { hd.distiller?.free(); hd.lab.free(); }
  }
}

export { STATUS };
