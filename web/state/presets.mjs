// presets.mjs: the lessons. Each preset is a link, `#preset=NAME`, that sets the whole state (the
// schema's defaults, then the preset's keys, then any key the link itself gives: explicit keys win), shows
// a caption of two to four sentences (what to look at, what it means, who says so) and highlights the
// readout rows and panels that carry the claim. Every claim is checked numerically by the end-to-end
// suite (tests/e2e/lessons.test.mjs) from window.attnviz.snapshot(). docs/lessons.md lists them.
// Pure data and pure functions; no DOM.

/**
 * The seed articles, by the English titles docs/variant-formulas.md gives them (the page names them in
 * English: a reader's system may have no CJK font; docs/lessons.md gives the original titles too).
 */
const ARTICLE = {
  survey: 'the seed article "Linear Attention"',
  mechanism: 'the seed article "The linear attention mechanism"',
  infinite: 'the seed article "Attention as an infinite-dimensional linear attention" (Su Jianlin, 2021)',
  rnn: 'the seed article "Transformers are RNNs" (Katharopoulos et al. 2020)',
};

/**
 * The lessons, in menu order. Per lesson:
 *   name       the link's `preset=` value
 *   title      the menu's text and the caption's heading
 *   state      the schema keys it sets (URL keys and values as a link gives them)
 *   caption    what to look at and what it means (plain text, two to four sentences)
 *   source     where the claim comes from
 *   highlight  readout row ids (web/render/readouts.mjs) and panels: 'heatmaps', 'spectrum', 'error',
 *              'entropy', 'cost', 'sweep'
 */
export const PRESETS = [
  {
    name: 'first-look',
    title: 'First look: softmax against linear attention',
    state: { gen: 'local', variant: 'elu', n: 256, d: 64 },
    caption: 'Tokens here attend mostly to their neighbours. Softmax (middle) keeps that sharp diagonal; '
      + 'linear attention with φ = elu+1 (left) spreads every row almost evenly, so its row entropy sits near ln n. '
      + 'Open a lesson to see why, and what each linear variant keeps.',
    source: ARTICLE.survey,
    highlight: ['heatmaps', 'row_entropy'],
  },
  {
    name: 'rank-le-d',
    title: 'Linear attention has rank ≤ d',
    state: { gen: 'gaussian', variant: 'elu', n: 256, d: 16, causal: 0 },
    caption: 'Linear attention is φ(Q)φ(K)ᵀ with each row divided by its sum: an n×d times d×n product, so its '
      + 'rank is at most d = 16 for any sequence length. The spectrum falls off a cliff at i = d (the dashed '
      + 'ceiling) and the rank readout says 16 of 256. Switch the variant to softmax: the exp between the product '
      + 'and the normalisation lifts the same Q, K to nearly full rank.',
    source: `${ARTICLE.survey}; ${ARTICLE.mechanism}`,
    highlight: ['rank', 'spectrum'],
  },
  {
    name: 'exp-spectrum',
    title: 'exp(QKᵀ) is not low-rank',
    state: { gen: 'gaussian', variant: 'softmax', n: 256, d: 16, causal: 0 },
    caption: 'The scores QKᵀ have rank d = 16: their singular values (QKᵀ, grey) stop at i = 16. After the '
      + 'exponential (exp(QKᵀ)) and the row normalisation (softmax) they decay slowly: far more than d of them '
      + 'stay above 10⁻³·σ₁, and the truncated-SVD error e(r) is still well above zero at r = d. No rank-d '
      + 'factorisation, and so no d-dimensional linear attention, reproduces softmax.',
    source: `${ARTICLE.mechanism} (its two figures: the spectra and the truncated-SVD error)`,
    highlight: ['rank_rel', 'spectrum', 'error'],
  },
  {
    name: 'crossover',
    title: 'When linear time pays: n against the feature dimension',
    state: { gen: 'gaussian', variant: 'elu', n: 64, d: 64 },
    caption: 'Softmax costs about n²·(d + dv) multiply-adds; linear attention computes φ(K)ᵀV once and then '
      + 'φ(Q) times it, about n·r·(d + dv) with r the feature dimension (here r = d = 64). At n = 64 the two '
      + 'cost about the same. Drag n: below r the linear path is dearer, at 1024 it is many times cheaper.',
    source: `${ARTICLE.survey}; ${ARTICLE.rnn}`,
    highlight: ['cost'],
  },
  {
    name: 'efficient-rows',
    title: 'Efficient Attention: rows sum to 1 by construction',
    state: { gen: 'gaussian', variant: 'efficient', n: 256, d: 64 },
    caption: 'Efficient Attention applies softmax to each query over its features and to each key feature over '
      + 'the positions, then multiplies: each row of M is a convex mix of distributions, so it sums to 1 with no '
      + 'division at all (largest |row sum − 1| is rounding). Compare Linformer with Gaussian E/F, whose rows '
      + 'sum to anything.',
    source: `Shen et al. 2021, "Efficient Attention"; ${ARTICLE.survey}`,
    highlight: ['row_sum_dev_max'],
  },
  {
    name: 'focused-p',
    title: 'Focusing power p sharpens the rows',
    state: { gen: 'clustered', variant: 'focused', n: 256, d: 64, p: 6, dwc: 0, sweep: 'p', sweep_y: 'error_fro_rel' },
    caption: 'FLatten raises each feature to the power p and rescales it to keep its norm, which pushes a query '
      + 'toward the keys that share its largest features. On clustered keys, dragging p from 1 to 8 lowers the '
      + 'row entropy and the error against softmax together. On Gaussian inputs (generator) the rows still '
      + 'sharpen, but toward the wrong keys: the error rises.',
    source: `Han et al. 2023, "FLatten Transformer"; ${ARTICLE.survey}`,
    highlight: ['row_entropy', 'error_fro_rel', 'entropy', 'sweep'],
  },
  {
    name: 'dwc-rank',
    title: 'Depthwise convolution lifts the rank above d',
    state: { gen: 'gaussian', variant: 'focused', n: 256, d: 16, p: 3, dwc: 1, dwc_k: 5 },
    caption: 'Focused linear attention alone has rank ≤ d = 16. FLatten adds a depthwise convolution on V, '
      + 'which acts like a banded n×n matrix added to M: the sum is full rank (untick DWC to compare). The '
      + 'band carries signed weights, so rows no longer sum to 1 and the entropy readouts are undefined.',
    source: `Han et al. 2023, "FLatten Transformer"; ${ARTICLE.survey}`,
    highlight: ['rank', 'spectrum'],
  },
  {
    name: 'linformer-s',
    title: 'Linformer: rank equals s',
    state: { gen: 'gaussian', variant: 'linformer', n: 256, d: 64, s: 32, ef_kind: 'mean', sweep: 's', sweep_y: 'rank', sweep_seeds: 1 },
    caption: 'Linformer projects the n keys and values down to s rows (E, F ∈ ℝ^{s×n}), so M = softmax(Q(EK)ᵀ)F '
      + 'has rank exactly s: drag s and the rank follows. With segment-mean E/F the rows stay distributions and '
      + 'the error falls slowly as s grows. Random Gaussian E/F (E/F kind) keep the rank but not the rows: '
      + 'their sums stray far from 1 and the error against softmax is large.',
    source: `Wang et al. 2020, "Linformer"; ${ARTICLE.survey}`,
    highlight: ['rank', 'error_fro_rel', 'spectrum', 'sweep'],
  },
  {
    name: 'performer-m',
    title: 'Performer: error falls as m grows',
    state: { gen: 'gaussian', variant: 'performer', n: 256, d: 64, std: 0.5, m: 256, orthogonal: 1, sweep: 'm', sweep_y: 'error_fro_rel', sweep_seeds: 3 },
    caption: 'FAVOR+ estimates exp(q·k) with m random features, and the estimate is unbiased: on inputs of '
      + 'moderate norm (std 0.5) the error against softmax falls roughly as 1/√m. The sweep below draws it from '
      + 'm = 1 to 4096 for three draws of the features (the band is their spread); drag m, or redraw the features.',
    source: `Choromanski et al. 2021, "Rethinking Attention with Performers"; ${ARTICLE.infinite}`,
    highlight: ['error_fro_rel', 'sweep'],
  },
  {
    name: 'performer-norm',
    title: 'Performer on large-norm inputs',
    state: { gen: 'gaussian', variant: 'performer', n: 256, d: 64, std: 1.5, m: 4096, orthogonal: 1, sweep: 'm', sweep_y: 'error_fro_rel', sweep_seeds: 3 },
    caption: 'The variance of FAVOR+ grows like exp(‖q‖² + ‖k‖²): at std 1.5 the error stays near 1 even at '
      + 'm = 4096, and more features barely help. One global stabiliser for the keys also leaves most of them '
      + 'with every exponential term below the ε inside φ: those keys get the same weight from every query '
      + '(see the note under the variant).',
    source: `Choromanski et al. 2021, "Rethinking Attention with Performers"; ${ARTICLE.infinite}`,
    highlight: ['error_fro_rel', 'row_entropy', 'sweep'],
  },
  {
    name: 'taylor-order',
    title: 'Taylor features: better with the order, dearer than softmax',
    state: { gen: 'gaussian', variant: 'taylor', n: 256, d: 8, order: 3, sweep: 'order', sweep_y: 'error_fro_rel' },
    caption: 'exp(q·k) = Σ (q·k)ʳ/r! is a linear attention with features of dimension Σ dʳ. Raising the order '
      + 'lowers the error against softmax, but at order 3 with d = 8 the features already number 585, more than '
      + 'the n = 256 tokens: the "linear" path is dearer than softmax (cost line).',
    source: ARTICLE.infinite,
    highlight: ['error_fro_rel', 'cost', 'sweep'],
  },
  {
    name: 'explimit-N',
    title: '(1 + q·k/N)^N → exp(q·k)',
    state: { gen: 'gaussian', variant: 'explimit', n: 256, d: 8, N: 8, sweep: 'N', sweep_y: 'error_fro_rel' },
    caption: '(1 + x/N)^N tends to eˣ, so (1 + q·k/N)^N is a linear attention whose features, of dimension '
      + '(d + 1)^N, approach softmax as N grows: drag N and the error falls. Already at N = 3 the 729 features '
      + 'outnumber the tokens, and at N = 8 there are 43 million: softmax is an infinite-dimensional linear '
      + 'attention.',
    source: ARTICLE.infinite,
    highlight: ['error_fro_rel', 'cost', 'sweep'],
  },
  {
    name: 'hedgehog-spiky',
    title: "Hedgehog's exp features are spiky",
    state: { gen: 'clustered', variant: 'hedgehog', n: 256, d: 64, std: 2 },
    caption: 'Hedgehog maps x to [exp(Wᵀx), exp(−Wᵀx)], which keeps the exponential\'s spikiness: on clustered '
      + 'keys its rows are far more concentrated (lower row entropy, fewer keys for 90%) than those of elu+1, '
      + 'whose rows stay nearly uniform. Switch the variant to elu+1 to compare. Here W = I; the paper learns W '
      + 'by distillation.',
    source: `Zhang et al. 2024, "The Hedgehog & the Porcupine"; ${ARTICLE.mechanism}`,
    highlight: ['row_entropy', 'keys_for_90', 'entropy'],
  },
  {
    name: 'sink',
    title: 'The attention sink',
    state: { gen: 'sink', variant: 'elu', n: 64, d: 64 },
    caption: 'Every query here points at token 0, and softmax (middle) gives that first column about half of every '
      + 'row: an attention sink. Linear attention with elu+1 (left) has no exponential to amplify the match and '
      + 'spreads the rows instead. Try the variants: Nyströmformer keeps the sink, the feature maps mostly '
      + 'lose it.',
    source: ARTICLE.mechanism,
    highlight: ['heatmaps', 'error_fro_rel'],
  },
  {
    name: 'decay-halflife',
    title: 'Decay: a state that forgets',
    state: { gen: 'local', variant: 'elu', causal: 1, decay: 0.8, n: 256, d: 16 },
    caption: 'Multiply the state by γ before each write (RetNet, Lightning Attention, Mamba-2, Gated DeltaNet) and a '
      + 'key\'s weight halves every ln ½ / ln γ tokens: 3.1 tokens at γ = 0.8. Each row now looks at its recent '
      + 'past, so the row entropy falls (about 2.3 here, 4.5 at γ = 1) and the semiseparable rank, the state a '
      + 'recurrence must carry across the middle, drops below d = 16. Drag γ towards 1 and both come back.',
    source: `${ARTICLE.mechanism} (its closing section: decay as the fix for a state that blurs); Sun et al. 2023, "Retentive Network"`,
    highlight: ['row_entropy', 'semiseparable_rank', 'heatmaps'],
  },
  {
    name: 'window-rank',
    title: 'A sliding window: full rank, a state of W − 1',
    state: { gen: 'gaussian', variant: 'softmax', causal: 1, window: 8, n: 256, d: 64 },
    caption: 'Softmax over only the last W = 8 keys is a band matrix: nearly full rank (the rank readout), yet the '
      + 'lower-left block that the first half hands to the second holds only W − 1 = 7 diagonals, so its rank, the '
      + 'semiseparable rank, is exactly 7. Rank and state size are different things: a window is cheap to run as a '
      + 'cache of W keys although no low-rank factorisation reproduces it.',
    source: `${ARTICLE.mechanism}; Dao & Gu 2024, "Transformers are SSMs" (semiseparable matrices)`,
    highlight: ['rank', 'semiseparable_rank', 'heatmaps'],
  },
  {
    name: 'delta-vs-linear',
    title: 'The delta rule overwrites where linear attention blends',
    state: { gen: 'clustered', variant: 'deltanet', beta: 1, decay: 1, n: 128, d: 16 },
    caption: 'Linear attention adds every k vᵀ to its state, so keys that point the same way collide and their '
      + 'values blend. The delta rule first removes what the state returns for the key, then writes: at η = 1 a '
      + 'repeated key returns its newest value, and each write projects its own key out of what came before, so '
      + 'the semiseparable rank is d − 1 = 15. Switch to retention with γ = 1, plain unnormalised linear attention '
      + 'on the same keys: rank d = 16 and rows that pile up every earlier value.',
    source: `${ARTICLE.mechanism} (memory collisions); Schlag et al. 2021; Yang et al. 2024, "Parallelizing Linear Transformers with the Delta Rule"`,
    highlight: ['semiseparable_rank', 'heatmaps'],
  },
  {
    name: 'retention-signed',
    title: 'Retention: an unnormalised, signed map',
    state: { gen: 'gaussian', variant: 'retention', n: 128, d: 32 },
    caption: 'Retention drops the row normaliser: M = (β·QKᵀ) ⊙ γ^(i−j) below the diagonal. Its weights are '
      + 'signed (the diverging map, blue below 0, red above), rows do not sum to 1, and the entropy and the '
      + 'keys-for-90% readouts are undefined because rows are not distributions. The decay γ = 1 − 2⁻⁵ (RetNet\'s '
      + 'first head) fades the band away from the diagonal.',
    source: `Sun et al. 2023, "Retentive Network"; ${ARTICLE.mechanism}`,
    highlight: ['heatmaps', 'row_entropy', 'row_sum_dev_max'],
  },
  {
    name: 'recurrent-state',
    title: 'The state that replaces the cache',
    state: { gen: 'local', variant: 'elu', causal: 1, n: 64, d: 16, mech: 'stepper', step: 40 },
    caption: 'Causal linear attention is a recurrence: each token adds φ(k)vᵀ to a state S of r × dv numbers and '
      + 'reads o = Sᵀφ(q) / φ(q)·z. Step through the tokens: the state keeps its size while softmax\'s key/value '
      + 'cache grows by one row per token, and every output row equals the masked matrix\'s row to float rounding.',
    source: ARTICLE.rnn,
    highlight: ['mech'],
  },
  {
    name: 'crossover-measured',
    title: 'Linear pays only when n > d, measured',
    state: { gen: 'gaussian', variant: 'elu', causal: 1, n: 64, d: 64, mech: 'scaling', budget: '16' },
    caption: 'The quadratic path costs about n²·d operations and n² memory, the linear one n·d² and a d × d state, so '
      + 'the linear path wins only once n exceeds the feature dimension (here r = d = 64). The worker times both in '
      + 'this browser for growing n; the quadratic path stops where its n × n matrix would pass the memory budget.',
    source: ARTICLE.survey,
    highlight: ['mech'],
  },
  {
    name: 'memory-collisions',
    title: 'A state of fixed size collides',
    state: { gen: 'gaussian', variant: 'elu', n: 64, d: 16, mech: 'recall', pairs: 512, mem_d: 32 },
    caption: 'Write N key→value pairs into a linear state S = Σ k vᵀ and read each key back: the other pairs add '
      + 'noise of size √((N − 1)/d), so recall fails once N nears d. Softmax over the stored pairs, with a sharp '
      + 'enough scale, recalls far beyond d pairs: its memory grows with N.',
    source: `${ARTICLE.mechanism} §3.1, §3.3`,
    highlight: ['mech'],
  },
  {
    name: 'delta-overwrite',
    title: 'The delta rule overwrites',
    state: { gen: 'gaussian', variant: 'deltanet', beta: 1, decay: 1, causal: 1, n: 64, d: 16, mech: 'recall', pairs: 128, mem_d: 16, mem_scale: 30 },
    caption: 'The delta rule reads what the state holds for a key before writing, and writes only the difference: '
      + 'a key written twice returns its newest value v′, where the linear state returns the blend v + v′. With '
      + 'β = 1 it beats the linear state at every N.',
    source: `${ARTICLE.mechanism} §3.3; Schlag et al. 2021; Yang et al. 2024, "Parallelizing Linear Transformers with the Delta Rule"`,
    highlight: ['mech'],
  },
  {
    name: 'hedgehog-distill',
    title: 'Hedgehog learns to mimic softmax',
    state: { gen: 'clustered', variant: 'hedgehog', causal: 1, n: 128, d: 32, mech: 'distill', steps: 200 },
    caption: 'Hedgehog\'s features exp(±Wᵀx) can be trained: Adam lowers the mean row KL between softmax and '
      + 'Hedgehog\'s attention on these Q and K, live in the worker. Within a few hundred steps it beats elu+1 and '
      + 'Performer by far; "use this W in the lab" puts the trained map in the heatmaps above.',
    source: `Zhang et al. 2024, "The Hedgehog & the Porcupine"; ${ARTICLE.mechanism}`,
    highlight: ['mech'],
  },
];

const BY_NAME = new Map(PRESETS.map((p) => [p.name, p]));

/** The lesson a page opened without a link shows. */
export const FIRST_LESSON = 'first-look';

/** The preset named `name` (a string from a link), or null. */
export function presetOf(name) {
  return typeof name === 'string' && BY_NAME.has(name) ? BY_NAME.get(name) : null;
}

/** The lesson after `name` in menu order (wrapping), or the first. */
export function nextPreset(name) {
  const i = PRESETS.findIndex((p) => p.name === name);
  return PRESETS[(i + 1) % PRESETS.length];
}

/**
 * Expand a link that names a preset: `preset=NAME&k=v…` → the hash state.mjs's fromHash reads, with the
 * preset's keys first and the link's own keys after them (fromHash reads pairs in order, so the link's
 * win). Returns {hash, preset (the name, or null), problem (a sentence, or null)}. A link without
 * `preset` is returned as it is; an empty link opens FIRST_LESSON.
 */
export function expandPreset(hash) {
  const text = String(hash ?? '').replace(/^#/, '');
  if (!text) return expandPreset(`preset=${FIRST_LESSON}`);
  const own = [];
  let name = null;
  for (const part of text.split('&')) {
    if (!part) continue;
    const i = part.indexOf('=');
    let key;
    try { key = decodeURIComponent(i < 0 ? part : part.slice(0, i)); } catch { key = null; }
    if (key === 'preset') {
      try { name = decodeURIComponent(i < 0 ? '' : part.slice(i + 1)); } catch { name = ''; }
    } else own.push(part);
  }
  if (name === null) return { hash: text, preset: null, problem: null };
  const p = presetOf(name);
  if (!p) return { hash: own.join('&'), preset: null, problem: `unknown lesson "${name.slice(0, 40)}": the link's other keys are used` };
  const keys = Object.entries(p.state).map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`);
  return { hash: [...keys, ...own].join('&'), preset: p.name, problem: null };
}

/** The address bar's hash for a state hash (state.mjs's toHash) under a lesson: `preset=NAME&` first. */
export function withPreset(stateHash, name) {
  return name ? `preset=${encodeURIComponent(name)}&${stateHash}` : stateHash;
}
