// explain.mjs: the page's explanations, as data: for every variant (its entry in web/state/variants.mjs) a few
// plain sentences (what it is, what to look for) and where it comes from, shown with its formula one click
// or key press away (a readout row's explanation is the library's, av_readout_info's `explain`, carried
// on its row of web/render/readouts.mjs); and the glossary of every symbol the page shows. Definitions in full:
// docs/variant-formulas.md and docs/readouts.md; the notation (β, s, p, ℓ, N, m): docs/variant-formulas.md,
// "Notation on the page".
// Pure data; no DOM (web/ui/explain-popover.mjs shows it).

import { VARIANT_VIEW } from './variants.mjs';

/** Per variant (registry name): {text, source}, from its entry in web/state/variants.mjs. */
export const VARIANT_EXPLAIN = Object.fromEntries(Object.entries(VARIANT_VIEW).map(([name, v]) => [name, v.explain]));

/** The glossary: every symbol the page shows, {tex, text}. */
export const GLOSSARY = [
  { tex: 'n', text: 'tokens: the sequence length; the matrices are n×n' },
  { tex: 'd', text: 'head dimension: the length of each query and key (values too, dv = d)' },
  { tex: 'Q, K, V', text: 'queries, keys and values: n×d, one row per token' },
  { tex: 'A', text: 'softmax attention on the same Q, K, scale and mask: the reference' },
  { tex: 'M', text: 'the variant\'s attention matrix (its effective n×n map)' },
  { tex: String.raw`\beta`, text: 'the logit scale (default 1/√d), multiplying q·k' },
  { tex: 'x', text: 'a scaled score β·q·k' },
  { tex: String.raw`\phi`, text: 'a feature map: linear attention uses φ(q)·φ(k) in place of exp(q·k)' },
  { tex: 'p', text: 'FLatten\'s focusing power' },
  { tex: 's', text: 'Linformer\'s projected length (E and F are s×n)' },
  { tex: 'm', text: 'Performer\'s number of random features' },
  { tex: String.raw`\ell`, text: 'the Taylor order' },
  { tex: 'N', text: 'the power in (1 + x/N)^N' },
  { tex: String.raw`\varepsilon`, text: 'a small constant added to keep a normaliser or a feature positive' },
  { tex: String.raw`\sigma_i`, text: 'the singular values of a matrix, largest first (σ₁)' },
  { tex: String.raw`\tau`, text: 'the sparsity threshold: weights below τ/n count as near zero' },
  { tex: String.raw`\ln n`, text: 'the entropy of a uniform row over n keys: the largest a row can have (the end of the entropy histogram\'s axis)' },
  { tex: String.raw`\tfrac1n\textstyle\sum_i \ln m_i`, text: 'uniform: the mean entropy of uniform rows, row i over its m_i allowed keys; ln n, or ln(n!)/n causal: the baseline every row-entropy view reads against' },
  { tex: 'e(r)', text: 'the truncated-SVD error: the share of ‖M‖²_F beyond the r largest singular values' },
];
