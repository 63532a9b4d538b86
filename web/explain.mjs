// explain.mjs: the page's explanations, as data: for every variant and every readout row, a few plain
// sentences (what it is, what to look for, when it is undefined) and where it comes from, shown with its
// formula (the TeX of web/variants.mjs and web/render/readouts.mjs) one click or key press away; and the
// glossary of every symbol the page shows. Definitions in full: docs/variant-formulas.md and
// docs/readouts.md; the notation (β, s, p, ℓ, N, m): docs/variant-formulas.md, "Notation on the page".
// Pure data; no DOM (web/ui/explain-popover.mjs shows it).

const SURVEY = 'the seed article "Linear Attention"';
const MECH = 'the seed article "The linear attention mechanism"';
const INF = 'the seed article "Attention as an infinite-dimensional linear attention" (Su Jianlin, 2021)';

/** Per variant (registry name): {text, source}. */
export const VARIANT_EXPLAIN = {
  softmax: { text: 'Each row is a softmax of the scaled scores β·q·k over the keys the row may see: positive weights that sum to 1, as sharp as the scores are far apart. Computing it costs n² score evaluations; every other variant is compared with it.', source: 'Vaswani et al. 2017, "Attention Is All You Need"' },
  elu: { text: 'Replace exp(q·k) by φ(q)·φ(k) with φ = elu + 1 (positive), and normalise each row by its sum. Then (φ(Q)φ(K)ᵀ)V can be computed as φ(Q)(φ(K)ᵀV) in time linear in n, but the matrix has rank at most d and its rows come out nearly uniform.', source: `Katharopoulos et al. 2020, "Transformers are RNNs"; ${SURVEY}` },
  relu: { text: 'Linear attention with φ = relu: features can be exactly zero, so a query whose features all vanish has a zero row (its readouts say so). Rank at most d.', source: SURVEY },
  exp: { text: 'Linear attention with φ = exp applied to each coordinate (with stabilisers so nothing overflows): positive, spikier than elu + 1, still rank at most d. This is not exp(q·k).', source: SURVEY },
  efficient: { text: 'A softmax over each query\'s features times a softmax over the positions of each key feature: every row is a mix of distributions, so rows sum to 1 with no division. Rank at most d; no causal form.', source: `Shen et al. 2021, "Efficient Attention"; ${SURVEY}` },
  focused: { text: 'FLatten\'s focused map raises relu features to the power p and rescales them to keep their norm, sharpening rows toward the keys that share a query\'s largest features. An optional depthwise convolution on V adds a banded matrix that lifts the rank above d.', source: `Han et al. 2023, "FLatten Transformer"; ${SURVEY}` },
  linformer: { text: 'Project the n keys and values down to s rows with E and F (random Gaussian, or segment means), then take softmax against the s projected keys: rank exactly s, cost linear in n. Gaussian E/F rows do not sum to 1.', source: `Wang et al. 2020, "Linformer"; ${SURVEY}` },
  performer: { text: 'FAVOR+ draws m random directions ω and uses positive features exp(ω·x − ‖x‖²/2) whose dot products estimate exp(q·k) without bias. The error falls as 1/√m on moderate inputs, but its variance grows like exp(‖q‖² + ‖k‖²); ε inside φ keeps rows finite.', source: `Choromanski et al. 2021, "Rethinking Attention with Performers"; ${INF}` },
  taylor: { text: 'Truncate exp(x) = Σ xʳ/r! at order ℓ: a linear attention with exact polynomial features of dimension Σ dʳ. Error against softmax falls with ℓ, but the features soon outnumber the tokens; terms can be negative, so rows can have negative weights.', source: INF },
  explimit: { text: '(1 + x/N)^N tends to eˣ as N grows, and is a linear attention with features of dimension (d + 1)^N. It approaches softmax as N grows, which makes softmax, in this sense, an infinite-dimensional linear attention.', source: INF },
  hedgehog: { text: 'Hedgehog\'s features [exp(Wᵀx), exp(−Wᵀx)] keep the spikiness and monotonicity of softmax; the paper learns W by distillation, the lab uses W = I. Rank at most 2d.', source: `Zhang et al. 2024, "The Hedgehog & the Porcupine"; ${MECH}` },
  nystrom: { text: 'Nyströmformer approximates softmax from landmark (segment-mean) queries and keys through a pseudo-inverse computed by a few Newton iterations. With landmarks = n it is exact; fewer landmarks cap the rank.', source: 'Xiong et al. 2021, "Nyströmformer"' },
  cosformer: { text: 'cosFormer multiplies relu features by cos(π(i − j)/2n), a decay with distance that linear attention can still compute in linear time (split into sin and cos parts). Rank at most 2d.', source: 'Qin et al. 2022, "cosFormer"' },
  retention: { text: 'Retention (RetNet; Lightning Attention and Mamba-2\'s scalar-decay SSD share its form) is causal linear attention without a normaliser, whose state fades by γ each step: M = (β·QKᵀ) ⊙ γ^(i−j). The matrix is signed, so its rows are not distributions; its state stays d × d, and its semiseparable rank is at most d.', source: 'Sun et al. 2023, "Retentive Network"; ' + MECH },
  deltanet: { text: 'The delta rule (DeltaNet; Gated DeltaNet when γ < 1) writes each value after erasing what the state already returns for that key: S ← γS, S += η·k(v − Sᵀk)ᵀ on unit keys. At η = 1 a key written twice returns its newest value, where linear attention returns the blend: the cure for the memory collisions of linear attention. M is signed; the semiseparable rank is at most d (d − 1 at η = 1).', source: 'Schlag et al. 2021; Yang et al. 2024, "Parallelizing Linear Transformers with the Delta Rule"; ' + MECH },
};

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
