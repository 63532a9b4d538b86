// explain.mjs: the page's explanations, as data: for every variant (its entry in web/state/variants.mjs) a few
// plain sentences (what it is, what to look for) and where it comes from, shown with its formula one click
// or key press away (a readout row's explanation is the library's, av_readout_info's `explain`, carried
// on its row of web/render/readouts.mjs); and the glossary of every symbol the page shows and of the
// concepts the lessons use, each with links into the lessons that show it. Definitions in full:
// docs/variant-formulas.md and docs/readouts.md; the notation (β, s, p, ℓ, N, m): docs/variant-formulas.md,
// "Notation on the page".
// Pure data; no DOM (web/ui/explain-popover.mjs shows it).

import { VARIANT_VIEW } from './variants.mjs';

/** Per variant (registry name): {text, source}, from its entry in web/state/variants.mjs. */
export const VARIANT_EXPLAIN = Object.fromEntries(Object.entries(VARIANT_VIEW).map(([name, v]) => [name, v.explain]));

/**
 * The glossary's symbols: every symbol the page and its lessons show, {id, sym (as the captions and labels write
 * it), tex, text, lessons (the presets that show it, web/state/presets.mjs)}. tests/js/explain.test.mjs holds it
 * to the captions and knob labels: every Greek letter there, and every knob's letter, has an entry. `id` keys
 * its Chinese (`glossary.ID`, web/i18n/zh/explain.mjs), stable however the captions come to write the symbol.
 */
export const GLOSSARY = [
  { id: 'n', sym: 'n', tex: 'n', text: 'tokens: the sequence length; the matrices are n×n', lessons: ['crossover'] },
  { id: 'd', sym: 'd', tex: 'd', text: 'head dimension: the length of each query and key (values too, dv = d)', lessons: ['rank-le-d', 'crossover'] },
  { id: 'qkv', sym: 'Q, K, V', tex: 'Q, K, V', text: 'queries, keys and values: n×d, one row per token', lessons: ['first-look'] },
  { id: 'A', sym: 'A', tex: 'A', text: 'softmax attention on the same Q, K, scale and mask: the reference', lessons: ['first-look'] },
  { id: 'M', sym: 'M', tex: 'M', text: 'the variant\'s attention matrix (its effective n×n map)', lessons: ['first-look'] },
  { id: 'beta', sym: 'β', tex: String.raw`\beta`, text: 'the logit scale (default 1/√d), multiplying q·k', lessons: ['first-look', 'exp-spectrum'] },
  { id: 'x', sym: 'x', tex: 'x', text: 'a scaled score β·q·k', lessons: ['explimit-N'] },
  { id: 'phi', sym: 'φ', tex: String.raw`\phi`, text: 'a feature map: linear attention uses φ(q)·φ(k) in place of exp(q·k)', lessons: ['first-look', 'hedgehog-spiky'] },
  { id: 'r', sym: 'r', tex: 'r', text: 'the feature dimension: the length of φ(x) (d for elu+1, m for Performer, 2c for Hedgehog, Σ dʳ for Taylor); linear attention\'s rank is at most r, and its linear path pays only when n > r', lessons: ['crossover', 'taylor-order'] },
  { id: 'p', sym: 'p', tex: 'p', text: 'FLatten\'s focusing power', lessons: ['focused-p'] },
  { id: 's', sym: 's', tex: 's', text: 'Linformer\'s projected length (E and F are s×n)', lessons: ['linformer-s'] },
  { id: 'EF', sym: 'E/F', tex: 'E, F', text: 'Linformer\'s projections of the keys and values down to s rows: segment means (rows stay distributions) or random Gaussian', lessons: ['linformer-s', 'efficient-rows'] },
  { id: 'm', sym: 'm', tex: 'm', text: 'Performer\'s number of random features', lessons: ['performer-m'] },
  { id: 'omega', sym: 'ω', tex: String.raw`\omega`, text: 'Performer\'s random projections: m directions in ℝ^d, drawn iid Gaussian or orthogonal (the feature seed draws them)', lessons: ['performer-m'] },
  { id: 'ell', sym: 'ℓ', tex: String.raw`\ell`, text: 'the Taylor order', lessons: ['taylor-order'] },
  { id: 'N', sym: 'N', tex: 'N', text: 'the power in (1 + x/N)^N; in the recall view, the number of key→value pairs written', lessons: ['explimit-N', 'memory-collisions'] },
  { id: 'landmarks', sym: 'landmarks', tex: String.raw`\text{landmarks}`, text: 'Nyströmformer\'s segment means of Q and K through which it approximates softmax; with as many landmarks as tokens it is exact', lessons: ['sink'] },
  { id: 'eps', sym: 'ε', tex: String.raw`\varepsilon`, text: 'a small constant added to keep a normaliser or a feature positive', lessons: ['performer-norm'] },
  { id: 'gamma', sym: 'γ', tex: String.raw`\gamma`, text: 'the decay: the state is multiplied by γ before each write, so a key\'s weight halves every ln ½ / ln γ tokens (α in the delta rule\'s formula)', lessons: ['decay-halflife', 'retention-signed'] },
  { id: 'alpha', sym: 'α', tex: String.raw`\alpha`, text: 'the decay γ as the delta rule\'s formula writes it (Gated DeltaNet\'s notation)', lessons: ['delta-vs-linear'] },
  { id: 'Delta', sym: 'Δ', tex: String.raw`\Delta`, text: 'Mamba-2\'s step size Δ_t > 0, one per token from the input: the key is Δ·B and the log-gate A·Δ, so a large Δ writes more and forgets more', lessons: ['mamba2'] },
  { id: 'kappa', sym: 'κ̂', tex: String.raw`\hat\kappa`, text: 'RWKV-7\'s normalised key k/‖k‖: its transition erases a share a_icl of the state along κ̂ before each write (dplr with a = −κ̂, b = κ̂ ⊙ a_icl; the link keys dplr_ab=rwkv7, dplr_icl)', lessons: ['rwkv7'] },
  { id: 'eta', sym: 'η', tex: String.raw`\eta`, text: 'the delta rule\'s write strength: how much of the error v − Sᵀk each write stores (η = 1 overwrites; the link key is beta)', lessons: ['delta-overwrite', 'delta-vs-linear'] },
  { id: 'g', sym: 'g', tex: 'g', text: 'the log-gate of the gated families: their decay is α_t = exp(g_t), g_t ≤ 0, one per token (or per token and channel); a reset is g = −30 (α ≈ 1e-13), and FoX adds the gates between a key and a query to their score', lessons: [] },
  { id: 'W', sym: 'W', tex: 'W', text: 'the sliding window: token i sees only keys with |i − j| < W (causal: its last W keys, itself included); for Hedgehog, the d×c matrix of its feature map exp(±Wᵀx)', lessons: ['window-rank', 'hedgehog-distill'] },
  { id: 'S', sym: 'S', tex: 'S', text: 'the recurrent state: the r × dv matrix Σ φ(k)vᵀ a causal linear attention carries from token to token in place of the key/value cache', lessons: ['recurrent-state', 'memory-collisions'] },
  { id: 'z', sym: 'z', tex: 'z', text: 'the recurrent normaliser Σ φ(k): each output is Sᵀφ(q) divided by φ(q)·z', lessons: ['recurrent-state'] },
  { id: 'h', sym: 'h', tex: 'h', text: 'the half n/2 where the semiseparable rank cuts the matrix: the rank of the block of rows after h and columns before it', lessons: ['window-rank', 'decay-halflife'] },
  { id: 'C', sym: 'C', tex: 'C', text: 'the chunk size of the chunkwise form (it changes no matrix, only the cost)', lessons: [] },
  { id: 'sum', sym: 'Σ', tex: String.raw`\textstyle\sum`, text: 'a sum (of the terms of a series, or of the writes into a state)', lessons: ['taylor-order', 'memory-collisions'] },
  { id: 'pi', sym: 'π', tex: String.raw`\pi`, text: 'the circle constant, in cosFormer\'s reweighting cos(π(i − j)/2n)', lessons: [] },
  { id: 'sigma', sym: 'σᵢ', tex: String.raw`\sigma_i`, text: 'the singular values of a matrix, largest first (σ₁)', lessons: ['exp-spectrum', 'rank-le-d'] },
  { id: 'tau', sym: 'τ', tex: String.raw`\tau`, text: 'the sparsity threshold: weights below τ/n count as near zero', lessons: ['first-look'] },
  { id: 'lnN', sym: 'ln n', tex: String.raw`\ln n`, text: 'the entropy of a uniform row over n keys: the largest a row can have (the end of the entropy histogram\'s axis)', lessons: ['first-look'] },
  { id: 'uniform', sym: 'uniform', tex: String.raw`\tfrac1n\textstyle\sum_i \ln m_i`, text: 'uniform: the mean entropy of uniform rows, row i over its m_i allowed keys; ln n, or ln(n!)/n causal: the baseline every row-entropy view reads against', lessons: ['first-look'] },
  { id: 'er', sym: 'e(r)', tex: 'e(r)', text: 'the truncated-SVD error: the share of ‖M‖²_F beyond the r largest singular values', lessons: ['exp-spectrum'] },
];

/**
 * The glossary's concepts: {id, term, text, lessons (at least one, web/state/presets.mjs)}: what the lessons' words
 * mean, each a sentence or two, with links into the lessons that show it; their Chinese is `concept.ID` (the term)
 * and `concept.ID.text` (web/i18n/zh/explain.mjs).
 */
export const CONCEPTS = [
  { id: 'rank', term: 'rank', text: 'how many independent rows a matrix has: a product of n×r and r×n factors has rank ≤ r, so linear attention\'s map has rank ≤ its feature dimension', lessons: ['rank-le-d', 'linformer-s', 'dwc-rank'] },
  { id: 'numerical_rank', term: 'numerical rank', text: 'how many singular values stand above a tolerance: σ₁·n·ε₃₂ (the float32 rounding of an n×n matrix) for the readout "numerical rank", 10ᵗ·σ₁ for "rank above 10ᵗ·σ₁" (the slider\'s t); the rank that survives rounding, high where a spectrum decays slowly', lessons: ['rank-le-d', 'exp-spectrum'] },
  { id: 'semiseparable_rank', term: 'semiseparable rank', text: 'the rank of the block that the first half of the tokens hands to the second (rows after h = n/2, columns before it): how much a recurrence must carry across the middle', lessons: ['window-rank', 'decay-halflife', 'delta-vs-linear'] },
  { id: 'row_entropy', term: 'row entropy', text: '−Σⱼ pⱼ ln pⱼ with pⱼ a row\'s weights divided by their sum (over the keys it may see): ln n for a uniform row, near 0 for a row on one key; the page\'s measure of how spread (flat) or focused a row is', lessons: ['first-look', 'focused-p', 'decay-halflife'] },
  { id: 'keys_for_90', term: 'keys for 90 %', text: 'the fewest keys, largest first, whose weights reach 90 % of a row\'s sum: a few for a spiky row, most of n for a flat one', lessons: ['hedgehog-spiky', 'first-look'] },
  { id: 'spiky', term: 'spiky', text: 'a row whose weight sits on a few keys (low entropy, few keys for 90 %): what exp gives softmax and what flat feature maps such as elu+1 lose', lessons: ['hedgehog-spiky', 'focused-p', 'first-look'] },
  { id: 'attention_sink', term: 'attention sink', text: 'a key (often the first token) that takes a large share of every row\'s weight; softmax\'s exp amplifies the match, linear feature maps do not', lessons: ['sink'] },
  { id: 'kernel', term: 'kernel, feature map', text: 'a function φ with φ(q)·φ(k) standing in for exp(q·k); computing φ(K)ᵀV once makes attention linear in n', lessons: ['first-look', 'performer-m', 'taylor-order', 'explimit-N'] },
  { id: 'state', term: 'state', text: 'what a recurrent (causal linear) attention carries between tokens: S and z, of fixed size whatever n, in place of softmax\'s growing key/value cache', lessons: ['recurrent-state', 'memory-collisions', 'decay-halflife'] },
  { id: 'causal_mask', term: 'causal mask', text: 'row i sees keys j ≤ i only (a token attends to itself and the past): what an autoregressive model and a recurrence compute', lessons: ['recurrent-state', 'window-rank'] },
  { id: 'truncated_svd', term: 'truncated SVD', text: 'the best rank-r approximation of a matrix (its r largest singular values and vectors); e(r) is the share of the matrix it leaves out', lessons: ['exp-spectrum'] },
  { id: 'kl', term: 'KL divergence', text: 'Σⱼ aⱼ ln(aⱼ/mⱼ) over a row: how far the variant\'s row m is from softmax\'s row a (0 when equal); the mean row KL is what distillation lowers', lessons: ['hedgehog-distill'] },
  { id: 'memory_collision', term: 'memory collision', text: 'keys that are not orthogonal, summed into one fixed-size state, interfere: reading one key back returns a blend of the others\' values', lessons: ['memory-collisions', 'delta-overwrite'] },
  { id: 'delta_rule', term: 'delta rule', text: 'a write that first removes what the state returns for the key, then stores the difference (strength η): at η = 1 a repeated key returns its newest value', lessons: ['delta-overwrite', 'delta-vs-linear'] },
  { id: 'distillation', term: 'distillation', text: 'training a feature map to mimic softmax\'s rows (lowering the mean row KL); scored fairly only on Q, K it was not trained on', lessons: ['hedgehog-distill'] },
];
