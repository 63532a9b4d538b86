// variants.mjs: the page's presentation of the variants and their knobs, keyed by the registry's names.
// Everything else about a variant (the list, its class and forms, which knobs it reads, their types,
// ranges, defaults and steps, causal rules, rank ceilings, feature dimensions) comes from the library's
// registry through the loader (av.registry, web/attnviz.mjs); formulas and sources: docs/variant-formulas.md.
// A variant or knob missing here still works, with the registry's plain-text label and formula.
// Pure data; no DOM. docs/page.md lists the page's URL keys and how they map to the registry's knobs.

/**
 * Symbols (the same in every formula the page shows, docs/variant-formulas.md "Notation on the page"):
 * β the logit scale (default 1/√d), s Linformer's projected length, p FLatten's focusing power, ℓ the
 * Taylor order, N the power of (1 + x/N)^N, m Performer's random features, γ a decay (α in the delta rule's
 * formula), η the delta rule's write strength (the flag --beta, β in the papers); no two share a letter.
 *
 * Per variant: `label` (the picker and the heatmap caption), `tex` (one line of TeX, typeset by KaTeX
 * under the picker) and `hint` (what to look at, one or two sentences).
 */
export const VARIANT_VIEW = {
  softmax: {
    label: 'softmax (reference)',
    tex: String.raw`A = \operatorname{softmax}(\beta\,QK^\top)`,
    hint: 'The reference: full rank, every weight positive.',
  },
  elu: {
    label: 'linear, φ = elu+1',
    tex: String.raw`M_{ij} = \frac{\phi(q_i)\cdot\phi(k_j)}{\sum_l \phi(q_i)\cdot\phi(k_l)},\ \phi = \mathrm{elu}+1`,
    hint: 'Rank is capped by d: look at the spectrum fall off a cliff at i = d.',
  },
  relu: {
    label: 'linear, φ = relu',
    tex: String.raw`M_{ij} \propto \mathrm{relu}(q_i)\cdot\mathrm{relu}(k_j)`,
    hint: 'Rank ≤ d; rows whose features are all zero are reported.',
  },
  exp: {
    label: 'linear, φ = exp',
    tex: String.raw`M_{ij} \propto e^{q_i}\cdot e^{k_j}\ \text{(elementwise)}`,
    hint: 'Elementwise exp features: rank ≤ d, overflow is shown in magenta.',
  },
  efficient: {
    label: 'Efficient Attention',
    tex: String.raw`M = \rho_q(Q)\,\rho_k(K)^\top,\ \rho = \text{softmax}`,
    hint: 'Rows sum to 1 exactly, rank ≤ d, no causal form.',
  },
  focused: {
    label: 'focused (FLatten)',
    tex: String.raw`\phi = f_p(\mathrm{relu}(x)),\ f_p(y) = \tfrac{\|y\|}{\|y^p\|}\,y^p`,
    hint: 'Drag p from 1 to 6: rows sharpen, sparsity rises, rank stays ≤ d. DWC restores rank.',
  },
  linformer: {
    label: 'Linformer',
    tex: String.raw`M = \operatorname{softmax}(\beta\,Q(EK)^\top)\,F,\ E, F \text{ of } s \times n`,
    hint: 'Drag s: the rank follows s exactly.',
  },
  performer: {
    label: 'Performer FAVOR+',
    tex: String.raw`\phi(x) = \tfrac{1}{\sqrt m}\,e^{\omega_i\cdot x - \|x\|^2/2}`,
    hint: 'More random features m: error falls roughly as m^−½; orthogonal beats iid.',
  },
  taylor: {
    label: 'Taylor series of exp',
    tex: String.raw`M_{ij} \propto \textstyle\sum_{r\le \ell} (\beta\,q_i\cdot k_j)^r / r!`,
    hint: 'Feature dimension Σ_{r≤ℓ} dʳ grows fast; the matrix comes from the closed form.',
  },
  explimit: {
    label: '(1 + s/N)^N',
    tex: String.raw`M_{ij} \propto (1 + \beta\,q_i\cdot k_j/N)^N`,
    hint: '(1 + s/N)^N → exp as N grows; features (d+1)^N.',
  },
  hedgehog: {
    label: 'Hedgehog (W = I)',
    tex: String.raw`\phi(x) = [e^{W^\top x},\ e^{-W^\top x}]`,
    hint: 'W = identity here (training is its own view): spiky, rank ≤ 2d.',
  },
  nystrom: {
    label: 'Nyströmformer',
    tex: String.raw`M = F\,Z\,B,\ Z \approx \tilde A^{+}\ \text{(landmarks)}`,
    hint: 'landmarks = n gives exact softmax; fewer landmarks cap the rank.',
  },
  cosformer: {
    label: 'cosFormer',
    tex: String.raw`M_{ij} \propto \mathrm{relu}(q_i)\cdot\mathrm{relu}(k_j)\cos\tfrac{\pi(i-j)}{2n}`,
    hint: 'A locality bias cos(π(i−j)/2n) on relu features: rank ≤ 2d.',
  },
  retention: {
    label: 'retention (RetNet)',
    tex: String.raw`M = (\beta\,QK^\top) \odot D,\ D_{ij} = \gamma^{\,i-j}\ (j \le i)`,
    hint: 'No normaliser: M is signed (blue below zero). The decay γ fades old tokens; the state stays d × d.',
  },
  deltanet: {
    label: 'delta rule (DeltaNet)',
    tex: String.raw`S_t = \alpha S_{t-1} + \eta\,\hat k_t\,(v_t - \alpha S_{t-1}^\top \hat k_t)^\top,\ o_t = S_t^\top (\beta\,\hat q_t)`,
    hint: 'Each write first erases what the state held under its key: at η = 1 it overwrites. M is signed.',
  },
};

/** The variant a link without one opens on. */
export const OPENING_VARIANT = 'focused';

/**
 * Per registry knob (key as in av.registry.knobs):
 *   label     the control's label
 *   url       the page's state and URL key where it differs from the registry key (old links keep working)
 *   values    slider stops (the state still takes any value in the registry's range)
 *   relative  the page's value is a multiple of the knob's default rule (scale: ×1/√d), and min/max
 *             bound the page's value (the registry's range is open above)
 *   toggle    a knob whose 0 means "off" is a checkbox {url, label, short} plus a slider shown while it
 *             is on, starting at `start`
 *   control   'number' for a number box instead of a slider; `redraw` adds a "seed + 1" button
 * The knobs every variant shares (causal, scale: no variant lists them) sit with the inputs, in this
 * object's order; the others follow the registry's order.
 */
export const KNOB_VIEW = {
  scale: { label: 'logit scale β ×1/√d', relative: true, min: 0.05, max: 4 },
  causal: { label: 'causal mask' },
  p: { label: 'focusing power p' },
  dwc_kernel: { label: 'DWC kernel size', url: 'dwc_k', start: 5,
    toggle: { url: 'dwc', label: 'DWC (depthwise conv on V)', short: 'DWC' } },
  s: { label: 'projected length s' },
  ef_kind: { label: 'E/F kind' },
  ef_shared: { label: 'share E = F' },
  m: { label: 'random features m', values: [1, 2, 4, 8, 16, 32, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 2048,
    4096, 8192, 16384, 32768, 65536] },
  orthogonal: { label: 'orthogonal features' },
  seed: { label: 'feature seed', url: 'rseed', control: 'number', redraw: 'draw new random features (seed + 1)' },
  order: { label: 'Taylor order ℓ' },
  N: { label: 'power N' },
  landmarks: { label: 'landmarks' },
  iters: { label: 'pinv iterations' },
  feature_eps: { label: 'ε inside φ', values: [0, 1e-8, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2] },
  decay: { label: 'decay γ', short: 'decay γ',
    values: [0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.925, 0.95, 0.96875, 0.975, 0.98, 0.99, 0.995, 0.999, 1] },
  window: { label: 'sliding window W', short: 'window',
    values: [0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 512, 1024, 2048, 4096, 16384] },
  beta: { label: 'write strength η', values: [0.05, 0.1, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75, 2] },
  chunk: { label: 'chunk size C', values: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 16384] },
};

const TEX_ESCAPE = { '\\': String.raw`\textbackslash{}`, '^': String.raw`\textasciicircum{}`, '~': String.raw`\textasciitilde{}` };

/** A variant's presentation: this file's entry, or the registry's plain text where there is none. */
export function variantView(row) {
  const own = Object.hasOwn(VARIANT_VIEW, row.name) ? VARIANT_VIEW[row.name] : null;
  return {
    label: own?.label ?? row.label,
    tex: own?.tex ?? String.raw`\text{${row.formula.replace(/[\\{}$&#^_%~]/g, (c) => TEX_ESCAPE[c] ?? `\\${c}`)}}`,
    hint: own?.hint ?? `${row.formula} (${row.source})`,
  };
}
