// presets.mjs: the lessons. Each preset is a link, `#preset=NAME`, that sets the whole state (the
// schema's defaults, then the preset's keys, then any key the link itself gives: explicit keys win), shows
// a caption of two to four sentences (what to look at, what it means, who says so) and highlights the
// readout rows and panels that carry the claim. Every claim is checked numerically by the end-to-end
// suite (tests/e2e/lessons.test.mjs) from window.attnviz.snapshot(). docs/lessons.md lists them.
// The words here are the English; their Chinese is web/i18n/zh/lessons.mjs's `preset.NAME.*` (docs/i18n.md).
// Pure data and pure functions; no DOM.

import { seed, PAPER } from './citations.mjs';

/**
 * The lessons (the course's order is CHAPTERS', below). Per lesson:
 *   name       the link's `preset=` value
 *   title      the menu's text and the caption's heading
 *   state      the schema keys it sets (URL keys and values as a link gives them)
 *   caption    what to look at and what it means (plain text, two to four sentences)
 *   sources    where the claim comes from (web/state/citations.mjs): a seed article's section and the sentence
 *              the claim rests on, or the paper where no seed makes the claim (docs/lessons.md, "Citations")
 *   highlight  readout row ids (web/render/readouts.mjs) and panels: 'heatmaps', 'spectrum', 'error',
 *              'entropy', 'cost', 'sweep', 'row' (the single-row view), 'article' (the seed article's two
 *              figures: set figs=article)
 *   play       optional, where the knob is the point: {key, from, to, steps, log}: the lesson panel's ▶
 *              steps page key `key` through `steps` values from `from` to `to` (evenly, or evenly in log)
 *              as a drag would (playValues; web/ui/lessons.mjs)
 *   predict    optional, where a guess teaches: {question, choices, answer (the right choice's index),
 *              reveal (the state keys that show the answer, as a link gives them), explanation}. The panel
 *              asks, the reader picks, the page applies `reveal` and says whether the guess was right, with
 *              the explanation's {placeholders} filled from the revealed state's snapshot(): `{KEY}` a
 *              readout, `{state.KEY}` a state key, `{before.KEY}` / `{before.state.KEY}` the same before
 *              the reveal, `{cost}` the cost line's verdict, `{recall_MEMORY}` the recall view's error of
 *              that memory at N = pairs (web/ui/lessons.mjs fillPrediction)
 *   model      optional, true for a lesson on the real model (stories260K, which the reader gives): the panel
 *              says so, with the files' button, until a model is loaded; its evidence is the panel "what the
 *              model loses" (web/ui/lessons.mjs LOSES_EVIDENCE)
 *   compare    optional {key, value, label}: the evidence strip shows each cited plain readout for the state
 *              with this one key changed too ("row entropy 4.24 / 5.55 — p = 1: 5.41 / 5.55")
 */
export const PRESETS = [
  {
    name: 'first-look',
    title: 'First look: softmax against linear attention',
    compare: { key: 'variant', value: 'softmax', label: 'softmax' },
    state: { gen: 'local', variant: 'elu', n: 256, d: 64 },
    caption: 'Tokens here attend mostly to their neighbours. Softmax (its map A) keeps that sharp diagonal; '
      + 'linear attention with φ = elu+1 (its map M) spreads every row almost evenly, so its row entropy sits near ln n. '
      + 'Open a lesson to see why, and what each linear variant keeps.',
    sources: [
      seed('000', '线性 Attention 缺点', '也就是说, 原始的 attention 矩阵倾向于 **稀疏**, 这符合我们的认知: 一个 token 只需要关注部分 token 就可以了。如果所有 token 都关注, 那和平均池化就没有区别了。',
        'softmax attention tends to be sparse: a token attends to a few tokens; attending to all of them would be average pooling.'),
      PAPER.katharopoulos,
    ],
    highlight: ['heatmaps', 'row_entropy', 'row'],
  },
  {
    name: 'rank-le-d',
    title: 'Linear attention has rank ≤ d',
    compare: { key: 'variant', value: 'softmax', label: 'softmax' },
    state: { gen: 'gaussian', variant: 'elu', n: 256, d: 16, causal: 0 },
    caption: 'Linear attention is φ(Q)φ(K)ᵀ with each row divided by its sum: an n×d times d×n product, so its '
      + 'rank is at most d = 16 for any sequence length. The spectrum falls off a cliff at i = d (the dashed '
      + 'ceiling) and the rank readout says 16 of 256. Switch the variant to softmax: the exp between the product '
      + 'and the normalisation lifts the same Q, K to nearly full rank.',
    sources: [
      seed('000', '线性 Attention 缺点', '也就是说, 对于公式 $(2.5)$ 和 $(3.1)$ 来说, attention 矩阵的 秩 最大只能是 $d$。',
        'for linear attention (its formulas 2.5 and 3.1) the attention matrix has rank at most d.'),
      seed('000', '线性 Attention 缺点', '但是对于原始的 attention 矩阵来说, 我们对 $\\bold{Q} \\cdot \\bold{K}^{\\mathsf{T}}$ 的结果进行了 $\\exp$ 转换, 这会改变矩阵的 秩。',
        'but in the original attention we apply exp to Q·Kᵀ, and that changes the rank of the matrix.'),
      seed('003', '结果分析', '这就是线性Attention的低秩问题,低秩限制了线性Attention的表达能力。',
        'this is the low-rank problem of linear attention: the low rank limits what it can express.'),
    ],
    predict: {
      question: 'Halve d, from 16 to 8. What does the rank readout do?',
      choices: ['It stays near 256: the matrix is still n×n', 'It halves: at most d = 8', 'It drops to 1'],
      answer: 1,
      reveal: { d: 8 },
      explanation: 'At d = {state.d} the rank readout says {rank} of {state.n} (it was {before.rank} at d = {before.state.d}): '
        + 'M is an n×d times d×n product, so its rank is capped by d whatever n is.',
    },
    highlight: ['rank', 'spectrum'],
  },
  {
    name: 'exp-spectrum',
    title: 'exp(QKᵀ) is not low-rank',
    state: { gen: 'gaussian', variant: 'softmax', n: 256, d: 16, causal: 0, figs: 'article' },
    caption: 'QKᵀ has rank d = 16: in the article\'s first figure (σᵢ², log axis) its curve stops at i = 16 while '
      + 'exp(QKᵀ)\'s goes on across all 256. In the second, the rank-D truncated SVD of QKᵀ is exact from D = d; '
      + 'exp(QKᵀ) still misses about a fifth of its energy at D = d and needs D near 100, six times d, to miss under '
      + '1 % (the article, on its own Q and K, finds it still high at D = 500). Softmax keeps the slow decay: far '
      + 'more than d of its σ stay above 10⁻³·σ₁, so no d-dimensional linear attention reproduces it.',
    sources: [
      seed('001', '3.2. 有损的低秩近似', '有文献证明,Softmax Attention 的那个指数核(Gram 矩阵)的奇异值下降得非常缓慢。',
        'it has been shown in the literature that the singular values of the exponential kernel (Gram matrix) of softmax attention decay very slowly.'),
      seed('001', '3.2. 有损的低秩近似', '橙色线(exp(QK))的误差居高不下,这意味着即使 D 已经很大了(比如 X 轴走到了 500),橙色线的误差依然非常高。',
        'the error of the orange line, exp(QK), stays high: even at a large D (the x axis going to 500, say) it is still very high.'),
    ],
    highlight: ['rank_rel', 'article'], // the article's two figures carry both halves of the claim; the page's own spectrum and e(r) follow
  },
  {
    name: 'crossover',
    title: 'When linear time pays: n against the feature dimension',
    state: { gen: 'gaussian', variant: 'elu', n: 64, d: 64 },
    caption: 'Softmax costs about n²·(d + dv) multiply-adds; linear attention computes φ(K)ᵀV once and then '
      + 'φ(Q) times it, about n·r·(d + dv) with r the feature dimension (here r = d = 64). At n = 64 the two '
      + 'cost about the same. Drag n: below r the linear path is dearer, at 1024 it is many times cheaper.',
    sources: [
      seed('000', '线性 Attention 缺点', '原始 attention 的复杂度是 $O(n^2d)$, 线性 attention 的复杂度是 $O(nd^2)$。只有当 $n > d$ 时, 线性 attention 才能发挥优势, 否则不行。',
        'softmax costs O(n²d), linear attention O(nd²): linear attention pays only when n > d.'),
    ],
    predict: {
      question: 'With r = d = 64, from which n does the linear path start to pay?',
      choices: ['From the first token: linear is always cheaper', 'Once n passes r = 64', 'Only from n = 4096'],
      answer: 1,
      reveal: { n: 256 },
      explanation: 'At n = {state.n} the cost line says {cost}; at n = 64 the two cost about the same, and below '
        + 'n = r the linear path is the dearer one.',
    },
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
    sources: [
      seed('000', 'Efficient Attention', '公式 $(3.1)$ 利用了如下的性质: 如果 $\\bold{Q}^{\\prime}$ 的行向量是 **标准化** 的, 且 $\\bold{K}^{\\prime}$ 的列向量是 **标准化** 的, 那么 $\\bold{Q}^{\\prime} \\cdot \\bold{K}^{\\prime \\mathsf{T}}$ 的行向量也是 **标准化** 的。',
        "if Q′'s rows and K′'s columns are normalised, the rows of Q′K′ᵀ are normalised too."),
      PAPER.efficient,
    ],
    highlight: ['row_sum_dev_max'],
  },
  {
    name: 'focused-p',
    title: 'Focusing power p sharpens the rows',
    compare: { key: 'p', value: 1, label: 'p = 1' },
    state: { gen: 'clustered', variant: 'focused', n: 256, d: 64, p: 6, dwc: 0, sweep: 'p', sweep_y: 'error_fro_rel' },
    caption: 'FLatten raises each feature to the power p and rescales it to keep its norm, which pushes a query '
      + 'toward the keys that share its largest features. On clustered keys, dragging p from 1 to 8 lowers the '
      + 'row entropy and the error against softmax together. On Gaussian inputs (generator) the rows still '
      + 'sharpen, but toward the wrong keys: the error rises.',
    sources: [
      seed('000', 'FLatten Transformer', '按照作者的说法, 这样可以使得 attention 矩阵的 **稀疏性** 增加。',
        "by the authors' account, the focusing function makes the attention matrix sparser."),
      PAPER.flatten,
    ],
    highlight: ['row_entropy', 'error_fro_rel', 'entropy', 'sweep', 'row'],
    play: { key: 'p', from: 1, to: 8, steps: 29 },
  },
  {
    name: 'dwc-rank',
    title: 'Depthwise convolution lifts the rank above d',
    compare: { key: 'dwc', value: 0, label: 'no DWC' },
    state: { gen: 'gaussian', variant: 'focused', n: 256, d: 16, p: 3, dwc: 1, dwc_k: 5 },
    caption: 'Focused linear attention alone has rank ≤ d = 16. FLatten adds a depthwise convolution on V, '
      + 'which acts like a banded n×n matrix added to M: the sum is full rank (untick DWC to compare). The '
      + 'band carries signed weights, so rows no longer sum to 1 and the entropy readouts are undefined.',
    sources: [
      seed('000', 'FLatten Transformer', '作者说, 其有理由相信, $DWC(\\bold{V})$ 是一个 满秩矩阵, 这样就可以增加 $\\bold{O}$ 矩阵的 秩 了。',
        'the authors hold that DWC(V) is full rank, and so raises the rank of the output.'),
      PAPER.flatten,
    ],
    highlight: ['rank', 'spectrum'],
  },
  {
    name: 'linformer-s',
    title: 'Linformer: rank equals s',
    state: { gen: 'gaussian', variant: 'linformer', n: 256, d: 64, s: 32, ef_kind: 'mean', sweep: 's', sweep_y: 'rank', sweep_seeds: 1 },
    caption: 'Linformer projects the n keys and values down to s rows (E and F are s × n), so M = softmax(Q(EK)ᵀ)F '
      + 'has rank exactly s: drag s and the rank follows. With segment-mean E/F the rows stay distributions and '
      + 'the error falls slowly as s grows. Random Gaussian E/F (E/F kind) keep the rank but not the rows: '
      + 'their sums stray far from 1 and the error against softmax is large.',
    sources: [
      seed('000', 'Linformer', '首先, 作者提出, 在 self attention 中, attention 矩阵是 低秩矩阵。',
        'first, the authors hold that in self-attention the attention matrix is a low-rank matrix.'),
      PAPER.linformer,
    ],
    highlight: ['rank', 'error_fro_rel', 'spectrum', 'sweep'],
    play: { key: 's', from: 8, to: 256, steps: 6, log: true },
  },
  {
    name: 'performer-m',
    title: 'Performer: error falls as m grows',
    state: { gen: 'gaussian', variant: 'performer', n: 256, d: 64, std: 0.5, m: 256, orthogonal: 1, sweep: 'm', sweep_y: 'error_fro_rel', sweep_seeds: 3 },
    caption: 'FAVOR+ estimates exp(q·k) with m random features, and the estimate is unbiased: on inputs of '
      + 'moderate norm (std 0.5) the error against softmax falls as m grows: about 0.64 at m = 64, 0.40 at 256, 0.22 at '
      + '1024 and 0.13 at 4096, each ×4 in m cutting it by 1.6 to 1.8×, a little slower than the 2× of 1/√m. The sweep below draws it from '
      + 'm = 1 to 4096 for three draws of the features (the band is their spread); drag m, or redraw the features.',
    sources: [
      seed('003', '随机投影', '这样我们就通过随机投影的思想,将两个$d$维向量的内积指数,近似地转化为了两个$m$维向量的内积,并且$m\\to\\infty$时,两者理论上是相等的。',
        'random projection turns exp of a d-dimensional dot product into a dot product of m-dimensional vectors, equal in theory as m → ∞.'),
      PAPER.performer,
    ],
    predict: {
      question: 'The error falls roughly as 1/√m. How much must m grow to halve it?',
      choices: ['Double it, to m = 512', 'Four times, to m = 1024', 'Sixteen times, to m = 4096'],
      answer: 1,
      reveal: { m: 1024 },
      explanation: 'At m = {state.m} the error is {error_fro_rel}, against {before.error_fro_rel} at m = {before.state.m}: '
        + 'four times the features, √4 = 2 times less error (one draw of ω, so not exactly half).',
    },
    highlight: ['error_fro_rel', 'sweep'],
    play: { key: 'm', from: 16, to: 4096, steps: 9, log: true },
  },
  {
    name: 'performer-norm',
    title: 'Performer on large-norm inputs',
    state: { gen: 'gaussian', variant: 'performer', n: 256, d: 64, std: 1.5, m: 4096, orthogonal: 1, sweep: 'm', sweep_y: 'error_fro_rel', sweep_seeds: 3 },
    caption: 'The variance of FAVOR+ grows like exp(‖q‖² + ‖k‖²): at std 1.5 the error stays near 1 even at '
      + 'm = 4096, and more features barely help. One global stabiliser for the keys also leaves most of them '
      + 'with every exponential term below the ε inside φ: those keys get the same weight from every query '
      + '(see the note under the variant).',
    sources: [PAPER.performer],
    highlight: ['error_fro_rel', 'row_entropy', 'sweep'],
  },
  {
    name: 'taylor-order',
    title: 'Taylor features: better with the order, dearer than softmax',
    state: { gen: 'gaussian', variant: 'taylor', n: 256, d: 8, order: 3, sweep: 'order', sweep_y: 'error_fro_rel' },
    caption: 'exp(q·k) = Σ (q·k)ʳ/r! is a linear attention with features of dimension Σ dʳ. Raising the order '
      + 'lowers the error against softmax, but at order 3 with d = 8 the features already number 585, more than '
      + 'the n = 256 tokens: the "linear" path is dearer than softmax (cost line).',
    sources: [
      seed('003', '结果分析', '而两个确定性的方案输出纬度则是$d^n$级别的,这个通常都远远大于序列长度本身了,所以用它们来做线性Attention效率基本比标准的Attention还差。',
        'the deterministic maps have dimension of order dⁿ, usually far above the sequence length, so as linear attention they cost more than standard attention.', { mid: true }),
    ],
    highlight: ['error_fro_rel', 'cost', 'sweep'],
    play: { key: 'order', from: 1, to: 4, steps: 4 },
  },
  {
    name: 'explimit-N',
    title: '(1 + q·k/N)^N → exp(q·k)',
    state: { gen: 'gaussian', variant: 'explimit', n: 256, d: 8, N: 8, sweep: 'N', sweep_y: 'error_fro_rel' },
    caption: '(1 + x/N)^N tends to eˣ, so (1 + q·k/N)^N is a linear attention whose features, of dimension '
      + '(d + 1)^N, approach softmax as N grows: drag N and the error falls. Already at N = 3 the 729 features '
      + 'outnumber the tokens, and at N = 8 there are 43 million: softmax is an infinite-dimensional linear '
      + 'attention.',
    sources: [
      seed('003', '指数定义', '这可能是将标准Attention转换为线性Attention的最简单直接的方案。',
        '(1 + q·k/n)ⁿ is perhaps the simplest way to turn standard attention into linear attention.'),
      seed('003', '文章小结', '本文介绍了三种将标准Attention视为无限维线性Attention的理解,这些不同的视角能让我们将标准Attention与线性Attention联系起来,从多个角度更全面地理解Attention机制。',
        'three ways of seeing standard attention as an infinite-dimensional linear attention.'),
    ],
    highlight: ['error_fro_rel', 'cost', 'sweep'],
    play: { key: 'N', from: 1, to: 32, steps: 6, log: true },
  },
  {
    name: 'hedgehog-spiky',
    title: "Hedgehog's exp features are spiky",
    compare: { key: 'variant', value: 'elu', label: 'elu+1' },
    state: { gen: 'clustered', variant: 'hedgehog', n: 256, d: 64, std: 2 },
    caption: 'Hedgehog maps x to [exp(Wᵀx), exp(−Wᵀx)], which keeps the exponential\'s spikiness: on clustered '
      + 'keys its rows are far more concentrated (lower row entropy, fewer keys for 90%) than those of elu+1, '
      + 'whose rows stay nearly uniform. Switch the variant to elu+1 to compare. Here W = I; the paper learns W '
      + 'by distillation.',
    sources: [
      PAPER.hedgehog,
      seed('001', '2. 线性注意力的“魔法”', '为什么要用 exp?因为它正是 Softmax Attention 里的核心元素,使用它有助于更好地模仿 Softmax 的行为。',
        "why exp? Because it is softmax attention's core element: using it helps mimic softmax's behaviour."),
    ],
    highlight: ['row_entropy', 'keys_for_90', 'entropy', 'row'],
  },
  {
    name: 'sink',
    title: 'The attention sink',
    state: { gen: 'sink', variant: 'elu', n: 64, d: 64, landmarks: 16 },
    caption: 'The queries here are built to match token 0, and softmax (its map A) gives that first column 0.74 of a '
      + 'row\'s weight on average: an attention sink. Linear attention with elu+1 (its map M) has no exponential to '
      + 'amplify the match and gives it 0.02, barely above the other keys (0.012 to 0.018). Try the variants: '
      + 'Nyströmformer, which rebuilds softmax from 16 landmark rows and columns (fewer than the 64 tokens, so not '
      + 'exact: error about 0.3), keeps the sink; the feature maps lose it.',
    sources: [PAPER.sinks, PAPER.nystrom],
    highlight: ['heatmaps', 'error_fro_rel', 'row'],
  },
  {
    name: 'decay-halflife',
    title: 'Decay: a state that forgets',
    compare: { key: 'decay', value: 1, label: 'γ = 1' },
    state: { gen: 'local', variant: 'elu', causal: 1, decay: 0.8, n: 256, d: 16 },
    caption: 'Multiply the state by a fixed γ before each write (RetNet, Lightning Attention; Mamba-2 and Gated DeltaNet '
      + 'make γ depend on the input) and a key\'s weight halves every ln ½ / ln γ tokens: 3.1 tokens at γ = 0.8. Each row now looks at its recent '
      + 'past, so the row entropy falls (about 2.3 here, 4.5 at γ = 1). The state a recurrence carries keeps its '
      + 'size, r × dv = 16 × 16 numbers; what drops is the numerical rank of what the first half hands the second '
      + '(the semiseparable rank: 8 here, d = 16 at γ = 1), as writes long before the middle fade below the rank '
      + 'tolerance. Drag γ towards 1 and both come back.',
    sources: [PAPER.retnet, PAPER.lightning, PAPER.ssd, PAPER.gatedDelta], // the caption's four decayed recurrences; Dao & Gu for the semiseparable rank
    highlight: ['row_entropy', 'semiseparable_rank', 'heatmaps'],
    play: { key: 'decay', from: 0.5, to: 1, steps: 11 },
  },
  {
    name: 'window-rank',
    title: 'A sliding window: full rank, a state of W − 1',
    state: { gen: 'gaussian', variant: 'softmax', causal: 1, window: 8, n: 256, d: 64 },
    caption: 'Softmax over only the last W = 8 keys is a band matrix: nearly full rank (the rank readout), yet the '
      + 'lower-left block that the first half hands to the second holds only W − 1 = 7 diagonals, so its rank, the '
      + 'semiseparable rank, is exactly 7. Rank and state size are different things: a window is cheap to run as a '
      + 'cache of W keys although no low-rank factorisation reproduces it.',
    sources: [PAPER.longformer, PAPER.ssd], // the sliding window; the semiseparable rank
    predict: {
      question: 'Widen the window from W = 8 to W = 32. What does the semiseparable rank do?',
      choices: ['It stays 7: d sets it', 'It grows about fourfold, up to W − 1 = 31', 'It falls: a wider window is smoother'],
      answer: 1,
      reveal: { window: 32 },
      explanation: 'At W = {state.window} the semiseparable rank is {semiseparable_rank} (it was {before.semiseparable_rank} '
        + 'at W = {before.state.window}), at most W − 1 = 31: the band\'s farthest corners hold weights below the rank '
        + 'tolerance. The rank is {rank} of {state.n} (it was {before.rank}): near full either way. What grows with W '
        + 'is the state a window hands on, not the matrix\'s rank.',
    },
    highlight: ['rank', 'semiseparable_rank', 'heatmaps'],
  },
  {
    name: 'delta-vs-linear',
    title: 'The delta rule overwrites where linear attention blends',
    state: { gen: 'clustered', variant: 'deltanet', beta: 1, decay: 1, n: 128, d: 16 },
    caption: 'Linear attention adds every k vᵀ to its state, so keys that point the same way collide and their '
      + 'values blend. The delta rule first removes what the state returns for the key, then writes: at η = 1 a '
      + 'repeated key returns its newest value, and each write projects its own key out of what came before, so '
      + 'the semiseparable rank is d − 1 = 15. Switch to retention and set γ to 1 (its own default is 1 − 2⁻⁵): plain '
      + 'unnormalised linear attention on the same keys, with rank d = 16 and rows that pile up every earlier value.',
    sources: [
      seed('001', '3.1. 记忆冲突与信息模糊 (Memory Collisions)', '当它们被“叠加”在一起时,它们的信息就会互相干扰。',
        'when keys that are not orthogonal are summed into the state, their information interferes (the delta rule is not in the article).'),
      PAPER.fastweights, PAPER.deltanet,
    ],
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
    sources: [PAPER.retnet],
    highlight: ['heatmaps', 'row_entropy', 'row_sum_dev_max'],
  },
  {
    name: 'recurrent-state',
    title: 'The state that replaces the cache',
    state: { gen: 'local', variant: 'elu', causal: 1, n: 64, d: 16, mech: 'stepper', step: 40 },
    caption: 'Causal linear attention is a recurrence: each token adds φ(k)vᵀ to a state S of r × dv numbers and '
      + 'reads o = Sᵀφ(q) / φ(q)·z. Step through the tokens: the state keeps its size while softmax\'s key/value '
      + 'cache grows by one row per token, and every output row equals the masked matrix\'s row to float rounding.',
    sources: [
      seed('004', null, '这种线性注意力可以通过上式递归地计算，类似于**RNN**。',
        'this linear attention can be computed recursively by these formulas (S_i, Z_i), like an RNN.'),
      seed('001', '2. 线性注意力的“魔法”', '再也不需要那个无限增长的 KV Cache 了。',
        '(keeping a fixed-size state H_t,) the ever-growing KV cache is no longer needed.', { mid: true }),
    ],
    highlight: ['mech'],
  },
  {
    name: 'crossover-measured',
    title: 'Linear pays only when n > d, measured',
    state: { gen: 'gaussian', variant: 'elu', causal: 1, n: 64, d: 64, mech: 'scaling', budget: '16' },
    caption: 'The quadratic path costs about n²·d operations and n² memory, the linear one n·d² and a d × d state, so '
      + 'the linear path wins only once n exceeds the feature dimension (here r = d = 64). The worker times both in '
      + 'this browser for growing n; the quadratic path stops where its n × n matrix would pass the memory budget.',
    sources: [
      seed('000', '线性 Attention 缺点', '只有当 $n > d$ 时, 线性 attention 才能发挥优势, 否则不行。',
        'linear attention pays only when n > d.'),
      seed('004', null, '随着输入序列长度$n$的增长，推理时间和内存占用也呈线性增长(标准的**softmax**呈平方增长)：',
        'as n grows, time and memory grow linearly (quadratically for standard softmax).'),
    ],
    highlight: ['mech'],
  },
  {
    name: 'memory-collisions',
    title: 'A state of fixed size collides',
    state: { gen: 'gaussian', variant: 'elu', n: 64, d: 16, mech: 'recall', pairs: 512, mem_d: 32 },
    caption: 'Write N key→value pairs into a linear state S = Σ k vᵀ, keys of dimension d = 32 (the recall view\'s '
      + 'own key dimension), and read each key back: the other pairs add noise of size √((N − 1)/d), so recall '
      + 'fails once N nears d. Softmax over the stored pairs, with a sharp '
      + 'enough scale, recalls far beyond d pairs: its memory grows with N.',
    sources: [
      seed('001', '3.1. 记忆冲突与信息模糊 (Memory Collisions)', '当它们被“叠加”在一起时,它们的信息就会互相干扰。',
        'keys that are not orthogonal, summed into one fixed-size state, interfere with each other.'),
      PAPER.fastweights,
    ],
    predict: {
      question: 'Double the state, from d = 32 to d = 64. What happens to the linear state\'s error at N = 512?',
      choices: ['It halves', 'It falls by √2, about 30 %', 'Nothing: the state is already full'],
      answer: 1,
      reveal: { mem_d: 64 },
      explanation: 'With d = {state.mem_d} the linear state\'s error at N = {state.pairs} is {recall_linear}, against '
        + '{before.recall_linear} at d = {before.state.mem_d}: the noise of the other pairs is √((N − 1)/d), so twice the '
        + 'dimension divides it by √2 only. Softmax over the stored pairs: {recall_softmax} (it was {before.recall_softmax}).',
    },
    highlight: ['mech'],
  },
  {
    name: 'delta-overwrite',
    title: 'The delta rule overwrites',
    state: { gen: 'gaussian', variant: 'deltanet', beta: 1, decay: 1, causal: 1, n: 64, d: 16, mech: 'recall', pairs: 128, mem_d: 16, mem_scale: 30 },
    caption: 'The delta rule reads what the state holds for a key before writing, and writes only the difference: '
      + 'a key written twice returns its newest value v′, where the linear state returns the blend v + v′. With '
      + 'write strength η = 1 it beats the linear state at every N.',
    sources: [
      seed('001', '3.1. 记忆冲突与信息模糊 (Memory Collisions)', '虽然能看到一个大概的轮廓(整体上下文),但每张照片独有的细节就会彼此覆盖、变得模糊不清。',
        "the linear state blurs: each pair's own detail is covered by the others (the article names the problem; the delta rule, its fix, is the papers')."),
      PAPER.fastweights, PAPER.deltanet,
    ],
    highlight: ['mech'],
  },
  {
    name: 'hedgehog-distill',
    title: 'Hedgehog learns to mimic softmax',
    state: { gen: 'clustered', variant: 'hedgehog', causal: 1, n: 128, d: 32, mech: 'distill', steps: 200 },
    caption: 'Hedgehog\'s features exp(±Wᵀx) can be trained: Adam lowers the mean row KL between softmax and '
      + 'Hedgehog\'s attention on these Q and K, live in the worker, and within a few hundred steps it beats elu+1 '
      + 'and Performer by far. It trains and scores on the same Q and K, so that is a fit, not a test: "use this W '
      + 'in the lab", then change the generator\'s seed, and the same W on fresh Q and K of the same kind gives a KL '
      + 'of about 0.5, better than W = I (1.1) and elu+1 (1.4) but worse than Performer (0.3). The paper distils on '
      + 'training data and tests on held-out data.',
    sources: [
      seed('001', '2. 线性注意力的“魔法”', '在训练过程中(比如通过知识蒸馏),模型会自动学习出最优的',
        'during training (for example by knowledge distillation) the model learns the best (directions wᵢ).'),
      PAPER.hedgehog,
    ],
    highlight: ['mech'],
  },
  {
    name: 'mamba2',
    title: 'Mamba-2 as a gated linear attention',
    state: { gen: 'local', variant: 'simple_gla', n: 256, d: 16, scale: 4, gate: 'mamba2', gate_A: -1, gate_dt: 0.05 },
    caption: 'Mamba-2\'s SSD layer is simple GLA under other names: the query is C, the key is Δ·B, the log-gate is A·Δ '
      + 'and the scale is 1 (here 4 × 1/√16; the skip D·x is not part of M). Δ_t comes from the input (a seeded projection, '
      + 'Δ = 0.05 where it is 0, with A = −1), so each token forgets by its own α_t = exp(A·Δ_t), from about 0.7 to 1 in the '
      + 'strip under the heatmaps. Whatever the gates, the state is d × d: the semiseparable rank stays at d = 16 while M '
      + 'itself is full rank.',
    sources: [PAPER.ssd],
    highlight: ['heatmaps', 'gates', 'semiseparable_rank'],
  },
  {
    name: 'rwkv7',
    title: 'RWKV-7: a diagonal decay plus a rank-one erase',
    compare: { key: 'dplr_ab', value: 'zero', label: 'a = b = 0 (GLA)' },
    state: { gen: 'local', variant: 'dplr', n: 256, d: 16, scale: 4, gate: 'uniform', gate_lo: 0.55, gate_hi: 1, dplr_ab: 'rwkv7', dplr_icl: 0.5 },
    caption: 'RWKV-7 is dplr: S_t = (diag(α_t) + b_t a_tᵀ) S_{t−1} + k_t v_tᵀ with a = −κ̂ (κ̂ = k/‖k‖), b = κ̂ ⊙ a_icl, '
      + 'scale 1 and a decay per channel in RWKV-7\'s range (α from 0.55 to 1). Before each write the rank-one term erases '
      + 'the share a_icl = 0.5 of the state along κ̂: a softened delta rule (at a_icl = 1, with the gate open and normalised '
      + 'keys, it is Gated DeltaNet with η = 1). The state stays d × d: the semiseparable rank is at most 16.',
    sources: [PAPER.rwkv7, PAPER.deltanet],
    highlight: ['heatmaps', 'gates', 'semiseparable_rank'],
  },
  {
    name: 'forget-sentences',
    title: 'Forget at sentence ends: a reset makes M block-diagonal',
    compare: { key: 'gate', value: 'constant', label: 'no resets' },
    state: { gen: 'local', variant: 'gdn', n: 256, d: 16, gate: 'resets', decay: 1, gate_period: 0, gate_at: '37,80,128,171,219' },
    caption: 'Gated DeltaNet with its gate open (α = 1) but reset at five tokens: the state is wiped before such a token '
      + 'writes, as a model forgetting at each sentence end. M falls apart into one block per "sentence"; with a reset at the '
      + 'middle token, nothing of the first half reaches the second: the semiseparable rank is 0 (16 = d without resets). '
      + 'With a model\'s text, "reset after sentence ends" under the strip does this at its sentences.',
    sources: [PAPER.gatedDelta],
    highlight: ['heatmaps', 'gates', 'semiseparable_rank'],
  },
  {
    name: 'gate-vs-decay',
    title: 'A gate from the data against a fixed decay',
    compare: { key: 'gate', value: 'constant', label: 'no resets (γ = 1)' },
    state: { gen: 'local', variant: 'gdn', n: 256, d: 16, gate: 'resets', decay: 1, gate_period: 0, gate_at: '64,128,192' },
    caption: 'What does a gate set by the data buy over a fixed decay? Gated DeltaNet here keeps its gate open (α = 1) '
      + 'and closes it (log-gate −30) only at tokens 64, 128 and 192: inside a segment nothing decays, and nothing crosses '
      + 'a reset. The reset at the middle token cuts M in two, so the semiseparable rank (what the first half hands the '
      + 'second) is 0. The paper pairs the two mechanisms: the gate erases memory fast, the delta rule makes targeted updates.',
    sources: [PAPER.gatedDelta],
    predict: {
      question: 'Swap the three resets for one constant decay with the same mean α: 0.988 at every token (253 tokens at 1, three at 0, over 256). What is the semiseparable rank at the middle token then?',
      choices: ['Still 0: the same forgetting, spread evenly', 'Back to d = 16: a constant decay never cuts', 'About half of d, 8'],
      answer: 1,
      reveal: { gate: 'constant', decay: 0.988 },
      explanation: 'With γ = {state.decay} on every token the semiseparable rank is {semiseparable_rank} (it was '
        + '{before.semiseparable_rank} with the resets): a decay below 1 scales what crosses the middle by γ per token but '
        + 'never makes it zero, and even γ = 0.9 leaves it at 16. Only a gate that closes at one token cuts M there.',
    },
    highlight: ['heatmaps', 'gates', 'semiseparable_rank'],
  },
  {
    name: 'channel-gates',
    title: 'A gate per channel (KDA) against one per token (Gated DeltaNet)',
    compare: { key: 'variant', value: 'gdn', label: 'Gated DeltaNet (one gate per token)' },
    state: { gen: 'local', variant: 'kda', n: 256, d: 16, gate: 'slow', gate_lo: 0.3, gate_hi: 1, gate_wave: 64 },
    caption: 'Kimi Delta Attention is Gated DeltaNet with one gate per key channel; here the gates swing slowly between '
      + 'α = 0.3 and 1 (a cosine of 64 tokens), each channel at its own phase, and Gated DeltaNet (the comparison) reads '
      + 'the first channel\'s gate alone, on the same inputs. With one gate every channel forgets at once when it dips, and '
      + 'little of the first half reaches the second (semiseparable rank 2); with a gate per channel some channels stay '
      + 'open while others forget, and more gets through (9 of at most 16). More is not better by itself: the error '
      + 'against softmax is the same for both (0.74), and with fla\'s GLA projection (gate = projection, α from 0.78 to 1) '
      + 'the two agree within 0.1 %. Kimi Linear argues for the finer, channel-wise gate.',
    sources: [PAPER.kimi, PAPER.gatedDelta],
    highlight: ['semiseparable_rank', 'error_fro_rel'],
  },
  {
    name: 'fox-window',
    title: 'FoX forgets smoothly where a window cuts',
    compare: { key: 'variant', value: 'softmax', label: 'softmax, window W = 16' },
    state: { gen: 'gaussian', variant: 'fox', causal: 1, n: 256, d: 64, window: 16, gate: 'projection' },
    caption: 'The Forgetting Transformer keeps softmax and adds a forget gate: each token\'s log-gate, here from fla\'s '
      + 'projection of the keys (α from 0.84 to 0.997), lowers the score of every key before it. A sliding window, the '
      + 'comparison (softmax over the last W = 16 keys), forgets by cutting: older keys get no weight, and the '
      + 'semiseparable rank is at most W − 1. FoX forgets as much as its gates ask: 90 % of a row\'s weight sits on '
      + 'about 31 keys (10 in the window), the semiseparable rank stays high (90, of at most 128) and the error against '
      + 'causal softmax is lower (0.90 against 1.55). Like softmax it keeps every key in its cache; the window keeps W.',
    sources: [PAPER.fox, PAPER.longformer],
    highlight: ['keys_for_90', 'semiseparable_rank', 'error_fro_rel'],
  },
  {
    name: 'story-breaks',
    title: 'elu+1 in every head breaks the story',
    model: true,
    state: { src: 'model', variant: 'elu', loses: 1, ls_scope: 'all', ls_path: 'matrix' },
    caption: 'stories260K is a real model: 5 layers of 8 heads, each head of size d = 8. Here its softmax is replaced by '
      + 'elu+1 in all 40 heads, and the sample sentence is read by both models. The mean next-token loss rises from 0.55 '
      + 'to 2.58 nats, and the two agree on the most likely next token at about half the positions (0.53). Greedy text '
      + 'shows it: after "…in the park." the original goes on "One day, Max saw a big box.", the swapped model "outs. outs, '
      + 'Lily\'s, Lily\'s…", different from the first token (marked).',
    sources: [
      seed('001', '3.2. 有损的低秩近似', '那么近似误差就会很大,模型效果就差。',
        '(if, for efficiency, the hidden state\'s dimension D is set low,) then the approximation error is large and the model performs poorly.', { mid: true }),
      seed('003', '结果分析', '如果要将标准Attention切换为线型Attention,那么$d$也要相应地进行放大,才能要效果保持一定程度上的近似。',
        'to switch standard attention to linear attention, d must be enlarged accordingly for the result to stay roughly the same.', { mid: true }),
    ],
    highlight: ['ls_loss', 'ls_top1', 'ls_cont'],
  },
  {
    name: 'distill-recovers',
    title: 'Distilled Hedgehog heads recover most of the loss',
    model: true,
    state: { src: 'model', variant: 'hedgehog', loses: 1, ls_scope: 'all', ls_path: 'matrix' },
    caption: 'Swapped into all 40 heads, Hedgehog\'s features exp(±Wᵀx) with W = I do worse than elu+1: loss 4.31 nats against elu+1\'s '
      + '2.58 and the original\'s 0.55 on the sample sentence. Press "distil": every head\'s W is trained for 100 steps '
      + 'to mimic its own softmax on the training text (a different story, in the panel), and the loss on the sample '
      + 'sentence, which the training never saw, falls to 1.35: of the 3.76 nats that W = I lost, four fifths are back. '
      + 'The distilled model beats elu+1\'s too (1.35 against 2.58), but stays well above the original.',
    sources: [
      seed('001', '2. 线性注意力的“魔法”', '在训练过程中(比如通过知识蒸馏),模型会自动学习出最优的',
        'during training (for example by knowledge distillation) the model learns the best (directions wᵢ).'),
      PAPER.hedgehog,
    ],
    highlight: ['ls_loss', 'ls_kl', 'ls_distill'],
  },
  {
    name: 'head-sensitivity',
    title: 'Some heads matter more than others',
    model: true,
    state: { src: 'model', variant: 'elu', loses: 1, ls_scope: 'all', ls_path: 'matrix' },
    caption: 'Press "compute the sensitivity map": each head, then each layer, is swapped for elu+1 alone, the rest kept. '
      + 'No head alone costs much on the sample sentence: the worst, layer 4 head 4, adds 0.04 nats, the mildest, layer 4 '
      + 'head 6, lowers the loss by 0.01, and 16 of the 40 lower it a little. Layer 3 swapped alone costs the most, about '
      + 'eight times layer 1. Yet all 40 together cost 2.03 nats, far more than the heads alone add up to (0.17): each '
      + 'swapped head changes what the later layers read.',
    sources: [PAPER.lolcats, PAPER.hedgehog],
    highlight: ['ls_sens', 'ls_loss'],
  },
  {
    name: 'window-plus-linear',
    title: 'A window of exact scores plus a linear rest',
    model: true,
    state: { src: 'model', variant: 'lolcats', window: 8, loses: 1, ls_scope: 'all', ls_path: 'matrix' },
    caption: 'LoLCATs keeps the last W = 8 scores of each query exact (softmax) and gives the keys before them a linear '
      + 'term, a Hedgehog map. Press "distil": every head\'s map is trained for 100 steps with the window in place. On '
      + 'the sample sentence the loss falls to 0.552, against the original\'s 0.549, with KL 0.05, where the distilled linear map alone '
      + '(the lesson before) stays at 1.35 and elu+1 at 2.58. The window alone (variant softmax, window 8) gives 0.57 with '
      + 'KL 0.09: the linear rest still adds what the window misses.',
    sources: [
      seed('000', '线性 Attention 缺点', '也就是说, 原始的 attention 矩阵倾向于 **稀疏**, 这符合我们的认知: 一个 token 只需要关注部分 token 就可以了。如果所有 token 都关注, 那和平均池化就没有区别了。',
        'that is, the original attention matrix tends to be sparse, which fits our intuition: a token needs to attend to only some tokens; if every token attended to all, it would be no different from average pooling.'),
      PAPER.lolcats,
    ],
    highlight: ['ls_loss', 'ls_kl', 'ls_distill'],
  },
];

/**
 * The course: the lessons in chapters that follow the articles' argument, from the reordering that makes
 * attention linear and what it costs, through what the linear map gives up (rank, focus, the exponential),
 * to the recurrent view, memory and learning the map. PRESETS is put in this order below: the menu, the
 * lesson numbers ("3 / 23"), previous and next all follow it. Every lesson is in exactly one chapter
 * (tests/js/presets.test.mjs).
 */
export const CHAPTERS = [
  { title: 'Linear attention and its cost', lessons: ['first-look', 'crossover', 'efficient-rows'] },
  { title: 'Low rank', lessons: ['rank-le-d', 'exp-spectrum', 'linformer-s'] },
  { title: 'Spikiness and focus', lessons: ['focused-p', 'dwc-rank', 'hedgehog-spiky', 'sink'] },
  { title: 'Approximating exp', lessons: ['performer-m', 'performer-norm', 'taylor-order', 'explimit-N'] },
  { title: 'The recurrent view: state, decay, windows', lessons: ['recurrent-state', 'crossover-measured', 'decay-halflife', 'window-rank', 'retention-signed'] },
  { title: 'Memory and the delta rule', lessons: ['memory-collisions', 'delta-overwrite', 'delta-vs-linear'] },
  { title: 'Learning the map', lessons: ['hedgehog-distill'] },
  { title: 'Gates as data: the families in today\'s models', lessons: ['mamba2', 'rwkv7', 'forget-sentences', 'gate-vs-decay', 'channel-gates', 'fox-window'] },
  { title: 'What the model loses', lessons: ['story-breaks', 'distill-recovers', 'head-sensitivity', 'window-plus-linear'] },
];
{
  const order = CHAPTERS.flatMap((c) => c.lessons);
  const place = (p) => { const i = order.indexOf(p.name); return i < 0 ? order.length : i; }; // a lesson in no chapter goes last (the test fails on it)
  PRESETS.sort((a, b) => place(a) - place(b));
}

/** The chapter of lesson `name`: {index (from 0), title, lessons}, or null. */
export function chapterOf(name) {
  const i = CHAPTERS.findIndex((c) => c.lessons.includes(name));
  return i < 0 ? null : { index: i, ...CHAPTERS[i] };
}

const BY_NAME = new Map(PRESETS.map((p) => [p.name, p]));

/**
 * The values a lesson's `play` steps through: `steps` of them from `from` to `to`, evenly spaced (in log
 * with `log`), to four significant digits so that a link reads 1.25, not 1.2500000000000002.
 */
export function playValues({ from, to, steps, log = false }) {
  return Array.from({ length: steps }, (_, k) => {
    const t = k / (steps - 1);
    return Number((log ? from * (to / from) ** t : from + (to - from) * t).toPrecision(4));
  });
}

/** The lesson a page opened without a link shows. */
export const FIRST_LESSON = 'first-look';

/** The preset named `name` (a string from a link), or null. */
export function presetOf(name) {
  return typeof name === 'string' && BY_NAME.has(name) ? BY_NAME.get(name) : null;
}

/** The lesson `step` places from `name` in the course's order, wrapping (−1: the one before; an unknown
 * name counts from before the first). */
export function stepPreset(name, step) {
  const i = PRESETS.findIndex((p) => p.name === name);
  const from = i < 0 ? (step > 0 ? -1 : 0) : i;
  return PRESETS[(((from + step) % PRESETS.length) + PRESETS.length) % PRESETS.length];
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
