// formulas.mjs: one line of TeX per variant (product.md §9), and a short sentence of what to look at.
export const VARIANT_TEX = {
  softmax: String.raw`A = \operatorname{softmax}(s\,QK^\top)`,
  elu: String.raw`M_{ij} = \frac{\phi(q_i)\cdot\phi(k_j)}{\sum_l \phi(q_i)\cdot\phi(k_l)},\ \phi = \mathrm{elu}+1`,
  relu: String.raw`M_{ij} \propto \mathrm{relu}(q_i)\cdot\mathrm{relu}(k_j)`,
  exp: String.raw`M_{ij} \propto e^{q_i}\cdot e^{k_j}\ \text{(elementwise)}`,
  efficient: String.raw`M = \rho_q(Q)\,\rho_k(K)^\top,\ \rho = \text{softmax}`,
  focused: String.raw`\phi = f_p(\mathrm{relu}(x)),\ f_p(y) = \tfrac{\|y\|}{\|y^p\|}\,y^p`,
  linformer: String.raw`M = \operatorname{softmax}(s\,Q(EK)^\top)\,F`,
  performer: String.raw`\phi(x) = \tfrac{1}{\sqrt m}\,e^{\omega_i\cdot x - \|x\|^2/2}`,
  taylor: String.raw`M_{ij} \propto \textstyle\sum_{r\le p} (s\,q_i\cdot k_j)^r / r!`,
  explimit: String.raw`M_{ij} \propto (1 + s\,q_i\cdot k_j/N)^N`,
  hedgehog: String.raw`\phi(x) = [e^{W^\top x},\ e^{-W^\top x}]`,
  nystrom: String.raw`M = F\,Z\,B,\ Z \approx \tilde A^{+}\ \text{(landmarks)}`,
  cosformer: String.raw`M_{ij} \propto \mathrm{relu}(q_i)\cdot\mathrm{relu}(k_j)\cos\tfrac{\pi(i-j)}{2n}`,
};

export const VARIANT_HINT = {
  softmax: 'The reference: full rank, every weight positive.',
  elu: 'Rank is capped by d: look at the spectrum fall off a cliff at i = d.',
  relu: 'Rank ≤ d; rows whose features are all zero are reported.',
  exp: 'Elementwise exp features: rank ≤ d, overflow is shown in magenta.',
  efficient: 'Rows sum to 1 exactly, rank ≤ d, no causal form.',
  focused: 'Drag p from 1 to 6: rows sharpen, sparsity rises, rank stays ≤ d. DWC restores rank.',
  linformer: 'Drag s: the rank follows s exactly.',
  performer: 'More random features m: error falls roughly as m^−½; orthogonal beats iid.',
  taylor: 'Feature dimension Σ dʳ grows fast; the matrix comes from the closed form.',
  explimit: '(1 + s/N)^N → exp as N grows; features (d+1)^N.',
  hedgehog: 'W = identity here (training is its own view): spiky, rank ≤ 2d.',
  nystrom: 'landmarks = n gives exact softmax; fewer landmarks cap the rank.',
  cosformer: 'A locality bias cos(π(i−j)/2n) on relu features: rank ≤ 2d.',
};
