// variants.mjs: the page's presentation of the variants and their knobs, keyed by the registry's names.
// Everything else about a variant (the list, its class and forms, which knobs it reads, their types,
// ranges, defaults and steps, causal rules, rank ceilings, feature dimensions) comes from the library's
// registry through the loader (av.registry, web/wasm/attnviz.mjs); formulas and sources: docs/variant-formulas.md.
// A variant or knob missing here still works, with the registry's plain-text label and formula.
// Pure data; no DOM. docs/page.md lists the page's URL keys and how they map to the registry's knobs.

import { SEEDS } from './citations.mjs';
import { VARIANT_RANDOM } from '../compute/random-draws.mjs';
import { enLabel as L, tOwn } from '../i18n/i18n.mjs';

// where the explanations' sources are the articles the lab was seeded from: by their own titles
// (web/state/citations.mjs; docs/lessons.md, "Citations")
const SURVEY = `the seed article 《${SEEDS['000'].title}》`;
const MECH = `the seed article 《${SEEDS['001'].title}》`;
const INF = `the seed article 《${SEEDS['003'].title}》 (${SEEDS['003'].author} ${SEEDS['003'].year}, ${SEEDS['003'].link})`;

// The gated families' numpy bodies share these lines (docs/gated.md): q̃ = scale·l2norm?(q), k̃ = l2norm?(k), the
// knob qk_l2norm 1 on, −1 off, 0 the family's default (`on`: the test of the knob that says "normalise").
const GATED_QK = (on) => '# q, k ← x/√(Σx² + 1e-6) before the scale when qk_l2norm says so (1 on, −1 off, 0 the default)\n' +
  `nrm = (lambda X: X / np.sqrt((X * X).sum(1, keepdims=True) + 1e-6)) if knob("qk_l2norm") ${on} else (lambda X: X)\n` +
  'Qt, Kt = S * nrm(Q), nrm(K)';
// one log-gate per token: Γ_ij = exp(g_(j+1) + … + g_i) for j ≤ i, from differences of float64 cumulative sums
const GATE_SCALAR = 'c = np.cumsum(gates)   # one log-gate per token\n' +
  'Gam = np.tril(np.exp(np.tril(c[:, None] - c[None, :])))   # Γ_ij = exp(g_(j+1) + … + g_i), j ≤ i';
// per channel (a per-token gate is the same in every channel): Σ_c X_ic Y_jc Γ_ijc, row by row (n×n×d would not fit)
const GATE_CHANNELS = 'gc = np.broadcast_to(gates.reshape(n, -1), (n, d)); C = np.cumsum(gc, 0)   # per channel\n' +
  'def pairs(X, Y, strict=False, before=False):\n' +
  '    # Σ_c X_ic Y_jc exp(g_(j+1)c + … + g_ic), j ≤ i; strict: j < i; before: the sum stops at i − 1 (dplr\'s read)\n' +
  '    P = np.zeros((n, n))\n' +
  '    for i in range(n):\n' +
  '        m = i if strict else i + 1\n' +
  '        P[i, :m] = (Y[:m] * np.exp(C[i] - (gc[i] if before else 0.0) - C[:m])) @ X[i]\n' +
  '    return P';

/**
 * Symbols (the same in every formula the page shows, docs/variant-formulas.md "Notation on the page"):
 * β the logit scale (default 1/√d), s Linformer's projected length, p FLatten's focusing power, ℓ the
 * Taylor order, N the power of (1 + x/N)^N, m Performer's random features, γ a decay (α in the delta rule's
 * formula), η the delta rule's write strength (the flag --beta, β in the papers); no two share a letter.
 *
 * Per variant, everything the page shows of it (a new variant's presentation is its entry here;
 * tests/js/presentation.test.mjs walks the registry and names any field missing):
 *   label    the picker and the heatmap caption
 *   tex      one line of TeX, typeset by KaTeX under the picker
 *   hint     what to look at, one or two sentences
 *   explain  {text, source}: a few plain sentences (what it is, what to look for) and where it comes from,
 *            shown by the (i) button (web/state/explain.mjs VARIANT_EXPLAIN)
 *   numpy    the body of the exported recompute.py (web/io/export.mjs numpySnippet), from
 *            docs/variant-formulas.md with ε and the stabilisers of docs/conventions.md; it sets R, the
 *            recomputed matrix. In scope: Q, K (n×d, float64), n, d, S (the scale), causal, mask,
 *            G (the decay γ^(i−j) on allowed entries), norm(A, eps, clamp) (masked row normalisation),
 *            lognorm(L) (row softmax of logits with the mask), knob(name) (the request's knob values),
 *            the random matrices of `random` and a gated family's gates (web/compute/gate-files.mjs:
 *            gates, betas, a, b as the library read them)
 *   random   the random matrices it draws, exported beside Q, K and M so that the script recomputes M:
 *            [{name (in the script), what (in the file name), kind (web/wasm/lab.mjs randomMatrix)}];
 *            [] for none. The lists are web/compute/random-draws.mjs's (the engine reads them there). (The DWC kernel belongs to the dwc_kernel knob: web/io/export.mjs adds it.)
 */
export const VARIANT_VIEW = {
  softmax: {
    label: 'softmax (reference)',
    tex: String.raw`A = \operatorname{softmax}(\beta\,QK^\top)`,
    hint: 'The reference: full rank, every weight positive.',
    explain: { text: 'Each row is a softmax of the scaled scores β·q·k over the keys the row may see: positive weights that sum to 1, as sharp as the scores are far apart. Computing it costs n² score evaluations; every other variant is compared with it.', source: 'Vaswani et al. 2017, "Attention Is All You Need"' },
    numpy: 'R = lognorm(S * Q @ K.T)',
    random: [],
  },
  elu: {
    label: 'linear, φ = elu+1',
    tex: String.raw`M_{ij} = \frac{\phi(q_i)\cdot\phi(k_j)}{\sum_l \phi(q_i)\cdot\phi(k_l)},\ \phi = \mathrm{elu}+1`,
    hint: 'Without the causal mask the rank is capped by d: with n > d the spectrum falls off a cliff at i = d. The causal mask lifts the cap (up to n).',
    explain: { text: 'Replace exp(q·k) by φ(q)·φ(k) with φ = elu + 1 (positive), and normalise each row by its sum. Then (φ(Q)φ(K)ᵀ)V can be computed as φ(Q)(φ(K)ᵀV) in time linear in n, but the matrix has rank at most d and its rows come out nearly uniform.', source: `Katharopoulos et al. 2020, "Transformers are RNNs"; ${SURVEY}` },
    numpy: 'phi = lambda X: np.where(X > 0, X + 1.0, np.exp(np.minimum(X, 0.0)))\nR = norm(phi(Q) @ phi(K).T, 1e-6)',
    random: [],
  },
  relu: {
    label: 'linear, φ = relu',
    tex: String.raw`M_{ij} \propto \mathrm{relu}(q_i)\cdot\mathrm{relu}(k_j)`,
    hint: 'Rank ≤ d; rows whose features are all zero are reported.',
    explain: { text: 'Linear attention with φ = relu: features can be exactly zero, so a query whose features all vanish has a zero row (its readouts say so). Rank at most d.', source: SURVEY },
    numpy: 'R = norm(np.maximum(Q, 0) @ np.maximum(K, 0).T, 1e-6)',
    random: [],
  },
  exp: {
    label: 'linear, φ = exp',
    tex: String.raw`M_{ij} \propto e^{q_i}\cdot e^{k_j}\ \text{(elementwise)}`,
    hint: 'Elementwise exp features: rank ≤ d, overflow is shown in magenta.',
    explain: { text: 'Linear attention with φ = exp applied to each coordinate (with stabilisers so nothing overflows): positive, spikier than elu + 1, still rank at most d. This is not exp(q·k).', source: SURVEY },
    numpy: '# φ = exp(x − c): c the query\'s own max, one max over all keys (both cancel; ε = 0)\n' +
      'R = norm(np.exp(Q - Q.max(1, keepdims=True)) @ np.exp(K - K.max()).T, 0.0)',
    random: [],
  },
  efficient: {
    label: 'Efficient Attention',
    tex: String.raw`M = \rho_q(Q)\,\rho_k(K)^\top,\ \rho = \text{softmax}`,
    hint: 'Rows sum to 1 exactly, rank ≤ d, no causal form.',
    explain: { text: 'A softmax over each query\'s features times a softmax over the positions of each key feature: every row is a mix of distributions, so rows sum to 1 with no division. Rank at most d; no causal form.', source: `Shen et al. 2021, "Efficient Attention"; ${SURVEY}` },
    numpy: 'rq = np.exp(Q - Q.max(1, keepdims=True)); rq /= rq.sum(1, keepdims=True)\n' +
      'rk = np.exp(K - K.max(0, keepdims=True)); rk /= rk.sum(0, keepdims=True)\nR = rq @ rk.T',
    random: [],
  },
  focused: {
    label: 'focused (FLatten)',
    tex: String.raw`\phi = f_p(\mathrm{relu}(x)),\ f_p(y) = \tfrac{\|y\|}{\|y^p\|}\,y^p`,
    hint: 'Drag p from 1 to 6: rows sharpen, sparsity rises, rank stays ≤ d. DWC restores rank.',
    explain: { text: 'FLatten\'s focused map raises relu features to the power p and rescales them to keep their norm, sharpening rows toward the keys that share a query\'s largest features. An optional depthwise convolution on V adds a banded matrix that lifts the rank above d.', source: `Han et al. 2023, "FLatten Transformer"; ${SURVEY}` },
    numpy: 'p = knob("p")\ndef phi(X):\n    Y = (np.maximum(X, 0.0) + 1e-6) / np.log(2.0)\n    Yp = Y ** p\n' +
      '    return np.linalg.norm(Y, axis=1, keepdims=True) * Yp / np.linalg.norm(Yp, axis=1, keepdims=True)\n' +
      'R = norm(phi(Q) @ phi(K).T, n * 1e-6)',
    random: [],
  },
  linformer: {
    label: 'Linformer',
    tex: String.raw`M = \operatorname{softmax}(\beta\,Q(EK)^\top)\,F,\ E, F \text{ of } s \times n`,
    hint: 'Drag s: the rank follows s exactly.',
    explain: { text: 'Project the n keys and values down to s rows with E and F (random Gaussian, or segment means), then take softmax against the s projected keys: rank exactly s, cost linear in n. Gaussian E/F rows do not sum to 1.', source: `Wang et al. 2020, "Linformer"; ${SURVEY}` },
    numpy: 'P = lognorm(S * Q @ (E @ K).T)   # n×s: softmax over the s projected keys (no mask)\nR = P @ F',
    random: VARIANT_RANDOM.linformer,
  },
  performer: {
    label: 'Performer FAVOR+',
    tex: String.raw`\phi(x) = \tfrac{1}{\sqrt m}\,e^{\omega_i\cdot x - \|x\|^2/2}`,
    hint: 'More random features m: error falls roughly as m^−½. Orthogonal ω lower it on average over draws, not on every draw, and not at every m.',
    explain: { text: 'FAVOR+ draws m random directions ω and uses positive features exp(ω·x − ‖x‖²/2) whose dot products estimate exp(q·k) without bias. The error falls as 1/√m on moderate inputs, but its variance grows like exp(‖q‖² + ‖k‖²); ε inside φ keeps rows finite.', source: `Choromanski et al. 2021, "Rethinking Attention with Performers"; ${INF}` },
    numpy: 'm, eps = W.shape[0], knob("feature_eps")\n' +
      'def phi(X, own_max):\n    Xs = np.sqrt(S) * X\n    U = Xs @ W.T\n    h = 0.5 * (Xs ** 2).sum(1, keepdims=True)\n' +
      '    c = U.max(1, keepdims=True) if own_max else U.max()   # per query; one max over all keys\n' +
      '    return (np.exp(U - h - c) + eps) / np.sqrt(m)\nR = norm(phi(Q, True) @ phi(K, False).T, 0.0)',
    random: VARIANT_RANDOM.performer,
  },
  taylor: {
    label: 'Taylor series of exp',
    tex: String.raw`M_{ij} \propto \textstyle\sum_{r\le \ell} (\beta\,q_i\cdot k_j)^r / r!`,
    hint: 'Feature dimension Σ dʳ over r = 0…ℓ grows fast; the matrix comes from the closed form.',
    explain: { text: 'Truncate exp(x) = Σ xʳ/r! at order ℓ: a linear attention with exact polynomial features of dimension Σ dʳ. Error against softmax falls with ℓ, but the features soon outnumber the tokens; terms can be negative, so rows can have negative weights.', source: INF },
    numpy: 'from math import factorial\nX = S * Q @ K.T\nR = norm(sum(X ** r / factorial(r) for r in range(knob("order") + 1)), 0.0)',
    random: [],
  },
  explimit: {
    label: '(1 + x/N)^N',
    tex: String.raw`M_{ij} \propto (1 + \beta\,q_i\cdot k_j/N)^N`,
    hint: '(1 + x/N)^N → exp(x), x = β·q·k, as N grows; features (d+1)^N.',
    explain: { text: '(1 + x/N)^N tends to eˣ as N grows, and is a linear attention with features of dimension (d + 1)^N. It approaches softmax as N grows, which makes softmax, in this sense, an infinite-dimensional linear attention.', source: INF },
    numpy: 'N = knob("N")\nR = norm((1.0 + S * Q @ K.T / N) ** N, 0.0)',
    random: [],
  },
  hedgehog: {
    label: 'Hedgehog (W = I)',
    tex: String.raw`\phi(x) = [e^{W^\top x},\ e^{-W^\top x}]`,
    hint: 'W = identity here (training is its own view): spiky, rank ≤ 2d.',
    explain: { text: 'Hedgehog\'s features [exp(Wᵀx), exp(−Wᵀx)] keep the spikiness and monotonicity of softmax; the paper learns W by distillation, the lab uses W = I. Rank at most 2d.', source: `Zhang et al. 2024, "The Hedgehog & the Porcupine"; ${MECH}` },
    numpy: 'U, V = Q @ np.eye(d), K @ np.eye(d)   # W: the identity (the page\'s hedgehog)\n' +
      'cq = np.abs(U).max(1, keepdims=True); ck = np.abs(V).max()\n' +
      'R = norm(np.hstack([np.exp(U - cq), np.exp(-U - cq)]) @ np.hstack([np.exp(V - ck), np.exp(-V - ck)]).T, 0.0)',
    random: [],
  },
  nystrom: {
    label: 'Nyströmformer',
    tex: String.raw`M = F\,Z\,B,\ Z \approx \tilde A^{+}\ \text{(landmarks)}`,
    hint: 'landmarks = n gives exact softmax; fewer landmarks cap the rank.',
    explain: { text: 'Nyströmformer approximates softmax from landmark (segment-mean) queries and keys through a pseudo-inverse computed by a few Newton iterations. With landmarks = n it is exact; fewer landmarks cap the rank.', source: 'Xiong et al. 2021, "Nyströmformer"' },
    numpy: 'm, iters = knob("landmarks"), max(knob("iters"), 0)\n' +
      'g = n // m; lengths = [g] * ((g + 1) * m - n) + [g + 1] * (n - g * m)   # segment lengths\n' +
      'P = np.zeros((m, n)); starts = np.cumsum([0] + lengths[:-1])\n' +
      'for t in range(m): P[t, starts[t]:starts[t] + lengths[t]] = 1.0 / lengths[t]\n' +
      'Ql, Kl = P @ Q, P @ K\nsm = lambda X: np.exp(X - X.max(1, keepdims=True)) / np.exp(X - X.max(1, keepdims=True)).sum(1, keepdims=True)\n' +
      'Fm, A, B = sm(S * Q @ Kl.T), sm(S * Ql @ Kl.T), sm(S * Ql @ K.T)\n' +
      'Z, I = A.T / A.sum(0).max(), np.eye(m)\nfor _ in range(iters):\n    AZ = A @ Z\n' +
      '    Z = 0.25 * Z @ (13 * I - AZ @ (15 * I - AZ @ (7 * I - AZ)))\n' +
      'R = lognorm(S * Q @ K.T) if m == n else Fm @ Z @ B',
    random: [],
  },
  cosformer: {
    label: 'cosFormer',
    tex: String.raw`M_{ij} \propto \mathrm{relu}(q_i)\cdot\mathrm{relu}(k_j)\cos\tfrac{\pi(i-j)}{2n}`,
    hint: 'A locality bias cos(π(i−j)/2n) on relu features: rank ≤ 2d.',
    explain: { text: 'cosFormer multiplies relu features by cos(π(i − j)/2n), a decay with distance that linear attention can still compute in linear time (split into sin and cos parts). Rank at most 2d.', source: 'Qin et al. 2022, "cosFormer"' },
    numpy: 'i = np.arange(1, n + 1)\nC = np.cos(np.pi * (i[:, None] - i[None, :]) / (2.0 * n))\n' +
      'R = norm((np.maximum(Q, 0) @ np.maximum(K, 0).T) * C, 0.0, clamp=1e-6)',
    random: [],
  },
  retention: {
    label: 'retention (RetNet)',
    tex: String.raw`M = (\beta\,QK^\top) \odot D,\ D_{ij} = \gamma^{\,i-j}\ (j \le i)`,
    hint: 'No normaliser: M is signed (blue below zero). The decay γ fades old tokens; the state stays d × d.',
    explain: { text: 'Retention (RetNet; Lightning Attention and Mamba-2\'s scalar-decay SSD share its form) is causal linear attention without a normaliser, whose state fades by γ each step: M = (β·QKᵀ) ⊙ γ^(i−j). The matrix is signed, so its rows are not distributions; its state stays d × d, and its semiseparable rank is at most d.', source: 'Sun et al. 2023, "Retentive Network", arXiv:2307.08621' }, // no seed discusses retention
    numpy: 'R = np.where(mask, S * (Q @ K.T) * G, 0.0)   # unnormalised: signed',
    random: [],
  },
  deltanet: {
    label: 'delta rule (DeltaNet)',
    tex: String.raw`S_t = \alpha S_{t-1} + \eta\,\hat k_t\,(v_t - \alpha S_{t-1}^\top \hat k_t)^\top,\ o_t = S_t^\top (\beta\,\hat q_t)`,
    hint: 'Each write first erases what the state held under its key: at η = 1 it overwrites. M is signed.',
    explain: { text: 'The delta rule (DeltaNet; Gated DeltaNet when γ < 1) writes each value after erasing what the state already returns for that key: S ← γS, S += η·k(v − Sᵀk)ᵀ on unit keys. At η = 1 a key written twice returns its newest value, where linear attention returns the blend: the cure for the memory collisions of linear attention. M is signed; the semiseparable rank is at most d (d − 1 at η = 1).', source: 'Schlag et al. 2021, arXiv:2102.11174; Yang et al. 2024, "Parallelizing Linear Transformers with the Delta Rule", arXiv:2406.06484; ' + MECH + ' §3.1 (the memory collisions; the delta rule is not in it)' },
    numpy: 'eta = knob("beta")\n' +
      'unit = lambda X: X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-300)\n' +
      'Qh, Kh = S * unit(Q), unit(K)\n' +
      'Lw = np.tril(eta * (Kh @ Kh.T) * G, -1)   # the writes each key undoes: stril(η·KKᵀ ⊙ Γ)\n' +
      'R = np.tril(Qh @ Kh.T * G) @ np.linalg.inv(np.eye(n) + Lw) * eta',
    random: [],
  },
  // The gated families (docs/gated.md): their gates are data, per token (and per channel); their numpy bodies
  // read the exported arrays (web/compute/gate-files.mjs): gates (the log-gates g), betas (η_t), a and b (dplr).
  simple_gla: {
    label: 'simple GLA (Mamba-2)',
    tex: String.raw`M_{ij} = \beta\,q_i\cdot k_j\textstyle\prod_{l=j+1}^{i}\alpha_l,\ \alpha_t = e^{g_t}`,
    hint: 'One decay α_t per token, from the input: a reset (α_t ≈ 0) cuts M into blocks, and the semiseparable rank across it falls to 0. M is signed; a constant gate is retention.',
    explain: { text: 'Retention whose decay changes from token to token: before token t writes k_t v_tᵀ, the state is multiplied by α_t = exp(g_t), a number the layer computes from the token, so M_ij = β·(q_i·k_j)·α_{j+1}⋯α_i. A gate near 0 forgets everything before it (M falls apart into blocks across it), a gate of 1 forgets nothing, and a constant gate γ is retention. It is Mamba-2\'s SSD layer (q = C, k = Δ·B, g = A·Δ, scale 1; the skip D·x is outside M), which makes up most layers of NVIDIA\'s Nemotron-H and IBM\'s Granite 4.0 hybrids and runs beside the attention heads of every layer of TII\'s Falcon-H1.', source: 'Dao & Gu 2024, "Transformers are SSMs" (Mamba-2), arXiv:2405.21060; Sun et al. 2023, "Retentive Network", arXiv:2307.08621; NVIDIA 2025, "Nemotron-H", arXiv:2504.03624; Zuo et al. 2025, "Falcon-H1", arXiv:2507.22448; IBM 2025, the Granite 4.0 announcement' },
    numpy: `${GATED_QK('> 0')}\n${GATE_SCALAR}\nR = Qt @ Kt.T * Gam`,
    random: [],
  },
  gla: {
    label: 'GLA (per channel)',
    tex: String.raw`M_{ij} = \beta \textstyle\sum_c q_{ic}\,k_{jc} \prod_{l=j+1}^{i}\alpha_{lc}`,
    hint: 'A decay per token and per channel: each channel of the state forgets at its own rate, so M is a sum of d differently decayed matrices. All channels equal: simple GLA.',
    explain: { text: 'Gated Linear Attention gives each of the d channels of the state its own gate: S_t = Diag(α_t) S_{t−1} + k_t v_tᵀ with α_t in (0, 1]^d computed from the token (fla\'s layer: g = logsigmoid(W x)/16). One channel can hold a key for thousands of tokens while another forgets within a few, which one gate per token cannot do; with all channels equal it is simple GLA. M is signed and unnormalised, and its semiseparable rank is still at most d.', source: 'Yang et al. 2024, "Gated Linear Attention Transformers with Hardware-Efficient Training", arXiv:2312.06635' },
    numpy: `${GATED_QK('> 0')}\n${GATE_CHANNELS}\nR = pairs(Qt, Kt)`,
    random: [],
  },
  gdn: {
    label: 'Gated DeltaNet',
    tex: String.raw`S_t = \alpha_t S_{t-1} + \eta_t\,\hat k_t\,(v_t - \alpha_t S_{t-1}^\top \hat k_t)^\top`,
    hint: 'The delta rule with a gate and a write strength per token: α_t fades the whole state, η_t sets how much of the error v − Sᵀk each write stores. M is signed.',
    explain: { text: 'Gated DeltaNet joins Mamba-2\'s gate and DeltaNet\'s delta rule: each token first decays the state by its α_t, then replaces what the state returns for its unit key k̂_t by its value, with strength η_t (β_t in the paper). The gate erases the whole memory at once (a reset), the delta rule edits one association and leaves the others. It is the linear-attention layer of Qwen3-Next and Qwen3.5, which interleave it with full attention (three Gated DeltaNet layers to one attention layer in Qwen3-Next). M is signed; the semiseparable rank is at most d.', source: 'Yang et al. 2025, "Gated Delta Networks: Improving Mamba2 with Delta Rule" (ICLR 2025), arXiv:2412.06464; the Qwen3-Next and Qwen3.5 model cards (Qwen team 2025, 2026)' },
    numpy: `${GATED_QK('>= 0')}\n${GATE_SCALAR}\n` +
      'Aqk, Akk = Qt @ Kt.T * Gam, np.tril(Kt @ Kt.T * Gam, -1)   # Akk: the earlier writes each key undoes (j < i)\n' +
      'R = Aqk @ np.linalg.inv(np.eye(n) + betas[:, None] * Akk) * betas   # η scales the rows of Akk',
    random: [],
  },
  kda: {
    label: 'Kimi Delta (KDA)',
    tex: String.raw`S_t = (I - \eta_t \hat k_t \hat k_t^\top)\operatorname{Diag}(\alpha_t) S_{t-1} + \eta_t \hat k_t v_t^\top`,
    hint: 'Gated DeltaNet with a gate per channel: the state forgets channel by channel, then the delta rule writes with strength η_t. All channels equal: Gated DeltaNet.',
    explain: { text: 'Kimi Delta Attention is Gated DeltaNet with GLA\'s per-channel gate: the state decays by Diag(α_t), one rate per key channel, before the delta-rule write of strength η_t on the unit key k̂_t. Its transition (I − η_t k̂_t k̂_tᵀ) Diag(α_t) is a diagonal-plus-low-rank matrix of a special form, which makes its chunkwise algorithm cheaper than the general DPLR one. Kimi Linear (48B parameters, 3B active) interleaves three KDA layers with one MLA (full attention) layer. M is signed; the semiseparable rank is at most d.', source: 'Kimi Team (Zhang et al.) 2025, "Kimi Linear: An Expressive, Efficient Attention Architecture", arXiv:2510.26692' },
    numpy: `${GATED_QK('>= 0')}\n${GATE_CHANNELS}\n` +
      'R = pairs(Qt, Kt) @ np.linalg.inv(np.eye(n) + betas[:, None] * pairs(Kt, Kt, strict=True)) * betas',
    random: [],
  },
  dplr: {
    label: 'DPLR (RWKV-7)',
    tex: String.raw`S_t = \big(\operatorname{Diag}(\alpha_t) + b_t a_t^\top\big)\,S_{t-1} + k_t v_t^\top`,
    hint: 'A per-channel decay plus a rank-one term per token: the state is read along a_t and written back along b_t. With a = b = 0 it is GLA; the delta rules are one choice of a and b.',
    explain: { text: 'The generalised delta rule: each token\'s transition is a diagonal decay Diag(α_t) plus a rank-one term b_t a_tᵀ, which reads the previous state along a_t (before the decay) and writes what it read back along b_t; then k_t v_tᵀ is added. With a = b = 0 it is GLA, and Gated DeltaNet and KDA are the case b = k̂, a = −η_t α_t ⊙ k̂ (with k scaled by η_t). RWKV-7 ("Goose") uses it in every layer, with a = −κ̂ and b = κ̂ ⊙ a_icl built from a normalised key κ̂ and an in-context learning rate a_icl, and scale 1 (fla\'s kernels default to 1/√d, as this page does). M is signed; the semiseparable rank is at most d.', source: 'Peng et al. 2025, "RWKV-7 “Goose” with Expressive Dynamic State Evolution", arXiv:2503.14456; Yang et al. 2024, "Parallelizing Linear Transformers with the Delta Rule", arXiv:2406.06484' },
    numpy: `${GATED_QK('> 0')}\n${GATE_CHANNELS}\n` +
      'Aab, Aak = pairs(a, b, True, True), pairs(a, Kt, True, True)   # the reads x_t = S_(t−1)ᵀ a_t, before the decay\n' +
      'R = pairs(Qt, Kt) + pairs(Qt, b) @ np.linalg.inv(np.eye(n) - Aab) @ Aak',
    random: [],
  },
  fox: {
    label: 'FoX (forget gate)',
    tex: String.raw`M_{ij} = \operatorname{softmax}_{j \le i}\big(\beta\,q_i\cdot k_j + \textstyle\sum_{l=j+1}^{i} g_l\big)`,
    hint: 'Softmax with a forget gate: each token\'s log-gate g_t ≤ 0 is added to the scores of every earlier key. Rows sum to 1; a reset hides all that came before it.',
    explain: { text: 'Forgetting Attention, the attention of the Forgetting Transformer (FoX), keeps softmax and adds a forget gate: the score of key j in row i is lowered by the log-gates g_l = ln f_l of the tokens after it, so M_ij ∝ exp(β·q_i·k_j)·f_{j+1}⋯f_i, a decay the data sets. A constant gate is the forgetting softmax (softmax with a decay γ) and a gate of 1 is causal softmax. It keeps softmax\'s full rank and rows that sum to 1, has no constant-size state (its recurrence is a key/value cache) and, the paper finds, needs no positional embedding.', source: 'Lin et al. 2025, "Forgetting Transformer: Softmax Attention with a Forget Gate" (ICLR 2025), arXiv:2503.02130' },
    numpy: `${GATED_QK('> 0')}\nc = np.cumsum(gates)   # one log-gate per token\n` +
      'L = np.where(mask, Qt @ Kt.T + np.tril(c[:, None] - c[None, :]), -np.inf)   # + g_(j+1) + … + g_i\n' +
      'E = np.exp(L - L.max(1, keepdims=True))\nR = E / E.sum(1, keepdims=True)',
    random: [],
  },
  lolcats: {
    label: 'Window + linear (LoLCATs)',
    tex: String.raw`M_{ij} \propto \begin{cases} e^{\beta\,q_i\cdot k_j - m_i} & i-W<j\le i \\ \phi(q_i)\cdot\phi(k_j) & j\le i-W \end{cases},\quad \phi(x) = [\operatorname{softmax}(x), \operatorname{softmax}(-x)]`,
    hint: 'The last W keys by exact softmax (the best counts 1), older ones by Hedgehog\'s softmax features φ (W_h = I here, φ·φ ≤ 2), one normaliser. W ≥ n is causal softmax.',
    explain: { text: 'LoLCATs linearises a trained Transformer by keeping exact softmax over a sliding window of the W most recent keys and replacing the rest by linear attention with Hedgehog\'s features, in LoLCATs\' code a softmax over the features: φ(x) = [softmax(W_hᵀx), softmax(−W_hᵀx)], trained to mimic softmax. The window\'s terms are exp(β·q·k − m_i), m_i the window\'s largest logit, so its best key counts 1, and each older key counts φ(q)·φ(k), between 0 and 2; one sum normalises both. LoLCATs also learns a factor on the window\'s terms; here it is 1. The lab shows W_h = I (its distillation is av_distill). Its recurrence is a cache of W keys plus a state of size 2d, and the semiseparable rank is at most W − 2 + 2d (each half of φ sums to 1).', source: 'Zhang et al. 2024, "LoLCATs: On Low-Rank Linearizing of Large Language Models", arXiv:2410.10254' },
    numpy: 'W = knob("window"); W = n if W <= 0 or W > n else W   # 0 or ≥ n: every key in the window\n' +
      'def phi(X):   # [softmax(x), softmax(−x)] over the features (W_h = I)\n' +
      '    P, N = np.exp(X - X.max(1, keepdims=True)), np.exp(X.min(1, keepdims=True) - X)\n' +
      '    return np.hstack([P / P.sum(1, keepdims=True), N / N.sum(1, keepdims=True)])\n' +
      'ii, jj = np.indices((n, n)); win = (jj <= ii) & (ii - jj < W)\n' +
      'L = np.where(win, S * (Q @ K.T), -np.inf)   # the window\'s logits; its largest term is e^0 = 1\n' +
      'E = np.where(win, np.exp(L - L.max(1, keepdims=True)), np.where(jj <= ii, phi(Q) @ phi(K).T, 0))\n' +
      'R = E / E.sum(1, keepdims=True)',
    random: [],
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
  scale: { label: L('scale'), relative: true, min: 0.05, max: 4 },
  causal: { label: L('causal') },
  p: { label: L('p') },
  dwc_kernel: { label: L('dwc_k'), url: 'dwc_k', start: 5,
    toggle: { url: 'dwc', label: L('dwc'), short: 'DWC' } },
  s: { label: L('s') },
  ef_kind: { label: L('ef_kind') },
  ef_shared: { label: L('ef_shared') },
  m: { label: L('m'), values: [1, 2, 4, 8, 16, 32, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 2048,
    4096, 8192, 16384, 32768, 65536] },
  orthogonal: { label: L('orthogonal') },
  seed: { label: L('rseed'), url: 'rseed', control: 'number', redraw: L('rseed.redraw') },
  order: { label: L('order') },
  N: { label: L('N') },
  landmarks: { label: L('landmarks') },
  iters: { label: L('iters') },
  feature_eps: { label: L('feature_eps'), values: [0, 1e-8, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2] },
  decay: { label: L('decay'), short: 'decay γ',
    values: [0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.925, 0.95, 0.96875, 0.975, 0.98, 0.99, 0.995, 0.999, 1] },
  window: { label: L('window'), short: 'window',
    values: [0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 512, 1024, 2048, 4096, 16384] },
  beta: { label: L('beta'), values: [0.05, 0.1, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75, 2] },
  chunk: { label: L('chunk'), values: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 16384] },
  qk_l2norm: { label: L('qk_l2norm') },
};

const TEX_ESCAPE = { '\\': String.raw`\textbackslash{}`, '^': String.raw`\textasciicircum{}`, '~': String.raw`\textasciitilde{}` };

/**
 * A variant's presentation: this file's entry, or the registry's plain text where there is none. The hint
 * is in the page's language (`variant.NAME.hint`, web/i18n/zh/explain.mjs); the label and TeX are data.
 */
export function variantView(row) {
  const own = Object.hasOwn(VARIANT_VIEW, row.name) ? VARIANT_VIEW[row.name] : null;
  return {
    label: own?.label ?? row.label,
    tex: own?.tex ?? String.raw`\text{${row.formula.replace(/[\\{}$&#^_%~]/g, (c) => TEX_ESCAPE[c] ?? `\\${c}`)}}`,
    hint: own?.hint ? tOwn(`variant.${row.name}.hint`, own.hint) : `${row.formula} (${row.source})`,
  };
}
