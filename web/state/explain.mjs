// explain.mjs: the page's explanations, as data: for every variant (its entry in web/state/variants.mjs) and
// every readout row, a few plain sentences (what it is, what to look for, when it is undefined) and where
// it comes from, shown with its formula (the TeX of web/state/variants.mjs and web/render/readouts.mjs) one click
// or key press away; and the glossary of every symbol the page shows. Definitions in full:
// docs/variant-formulas.md and docs/readouts.md; the notation (β, s, p, ℓ, N, m): docs/variant-formulas.md,
// "Notation on the page".
// Pure data; no DOM (web/ui/explain-popover.mjs shows it).

import { VARIANT_VIEW } from './variants.mjs';

/** Per variant (registry name): {text, source}, from its entry in web/state/variants.mjs. */
export const VARIANT_EXPLAIN = Object.fromEntries(Object.entries(VARIANT_VIEW).map(([name, v]) => [name, v.explain]));

/** Per readout row (web/render/readouts.mjs's ids): {text}. */
export const READOUT_EXPLAIN = {
  rank: { text: 'How many singular values are above the float32 noise of an n×n matrix (σ₁·n·ε₃₂). Linear attention cannot exceed its feature dimension; softmax usually is close to full rank.' },
  semiseparable_rank: { text: 'The rank of the lower-left block M[h:n, 0:h], h = ⌊n/2⌋, at the rank tolerance: how much the first half of the sequence must pass to the second, so the smallest state a recurrence producing M needs. At most the feature dimension for linear attention (decayed or not), d for retention and the delta rule (d − 1 at η = 1), W − 1 for a sliding window of W; full for softmax. The ceiling in brackets is that structural bound.', source: 'Dao & Gu 2024, "Transformers are SSMs" (semiseparable matrices)' },
  rank_rel: { text: 'How many singular values exceed 10ᵗ·σ₁ for the tolerance slider\'s t: a coarser rank that ignores tiny directions.' },
  effective_rank: { text: 'The exponential of the entropy of the normalised singular values: how many directions carry the matrix, counted smoothly (Roy & Vetterli 2007). Undefined for the zero matrix.' },
  stable_rank: { text: '‖M‖²_F / σ₁²: the energy relative to the largest direction; at most the rank, and robust to tiny singular values. Undefined for the zero matrix.' },
  rank_energy_99: { text: 'The fewest singular values whose squares hold 99 % of ‖M‖²_F: the rank a truncated SVD needs for 1 % error.' },
  sparsity_tau: { text: 'The share of allowed weights below τ/n (τ the slider): a uniform row has none; a sharp row has most of them near zero.' },
  'sparsity_lt_0.01': { text: 'The share of all n² entries below 0.01, regardless of n (the article\'s measure: about 60 % in a trained BERT).' },
  keys_for_90: { text: 'The mean, over rows, of the fewest keys whose weights reach 90 % of the row\'s sum: a few for sharp attention, most of n for flat. Undefined when a row has a negative weight or sums to zero.' },
  row_entropy: { text: 'The mean entropy of the rows (each normalised to sum 1), against uniform: the mean entropy of uniform rows, ln n, or ln(n!)/n under the causal mask, where row i sees only i + 1 keys. Low means focused. Undefined when a row has a negative weight or sums to zero.' },
  row_sum_dev_max: { text: 'The largest distance of a row\'s sum from 1: rounding for variants whose rows are distributions, large where E/F projections or a convolution change the sums.' },
  error_fro_rel: { text: 'The Frobenius distance to softmax on the same Q, K, scale and mask, relative to softmax\'s norm: 0 is exact.' },
  row_kl_mean: { text: 'The mean over rows of the Kullback–Leibler divergence from softmax\'s row to the variant\'s. Undefined where the variant has a negative weight or a zero where softmax is positive.' },
  output_error_rel: { text: 'The relative distance between the outputs MV and AV on the same V: what the next layer would see.' },
};

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
