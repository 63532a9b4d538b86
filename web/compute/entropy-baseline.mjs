// entropy-baseline.mjs: the one baseline row entropies are read against (docs/readouts.md,
// row_entropy_uniform), for every view that names it: the readout row, the entropy histogram's mark and
// note, its exported SVG and the overview's H. Pure; no DOM.

/** How every label names the baseline. */
export const UNIFORM_NAME = 'uniform';

/**
 * The mean entropy of uniform rows: the mean over rows of ln m_i, m_i the keys row i may see. ln n
 * without a mask; ln(n!)/n under the causal mask (row i sees i + 1 keys), which is the baseline a
 * causal row can actually reach (ln n only its last row can). Summed as the library sums it (readouts.c).
 */
export function uniformEntropy(n, causal) {
  if (!causal) return Math.log(n);
  let s = 0;
  for (let m = 1; m <= n; m++) s += Math.log(m);
  return s / n;
}
