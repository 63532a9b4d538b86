// row-stats.mjs: one row of an attention matrix as the single-row view reads it (web/ui/row-view.mjs): its
// entropy and its keys for 90 %, by the definitions of row_entropy_mean and keys_for_90 in docs/readouts.md
// applied to that row alone, in float64. Pure; no DOM, no module.

/**
 * Statistics of `row` (n numbers) over its first `m` entries, the allowed ones (m = i + 1 under a causal
 * mask, n otherwise). Returns {m, sum, entropy, keys90, uniform: ln m, reason}: entropy and keys90 are null,
 * with reason a sentence, when an allowed entry is negative or not finite, or the allowed entries sum to ≤ 0;
 * sum is the allowed entries' sum (null only when one is not finite).
 */
export function rowStats(row, m = row.length) {
  const out = { m, sum: null, entropy: null, keys90: null, uniform: Math.log(m), reason: null };
  let sum = 0, negative = false;
  for (let j = 0; j < m; j++) {
    const x = row[j];
    if (!Number.isFinite(x)) return { ...out, reason: 'the row holds Inf or NaN' };
    if (x < 0) negative = true;
    sum += x;
  }
  out.sum = sum; // a row's sum is defined whatever its signs (retention's, Linformer's with Gaussian E/F)
  if (negative) return { ...out, reason: 'the row has negative weights, so it is not a distribution' };
  if (!(sum > 0)) return { ...out, reason: 'the row sums to zero' };
  let h = 0;
  for (let j = 0; j < m; j++) {
    const p = row[j] / sum;
    if (p > 0) h -= p * Math.log(p); // zeros contribute 0
  }
  // the fewest keys, largest first, that reach 90 % of the row (the 1e-12 absorbs rounding, as readouts.c)
  const sorted = Float64Array.from(row.subarray ? row.subarray(0, m) : row.slice(0, m)).sort().reverse();
  const goal = (0.9 - 1e-12) * sum;
  let acc = 0, k = 0;
  while (k < m && acc < goal) acc += sorted[k++];
  return { ...out, entropy: h, keys90: k };
}
