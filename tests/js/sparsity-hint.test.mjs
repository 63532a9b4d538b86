// The hint of "weights below 0.01" (its row's explanation in src/readouts.c, as the registry carries it) says what the readout does, checked on the real wasm
// module: the threshold is fixed, so it depends on n. A flat map's weights are about 1/n: every one is
// below 0.01 once n > 100 (the readout reads 100 % on the first lesson's flat elu+1 map, n = 256), none
// of them at n = 64. The hint says so, and never calls it the seed article's measure (the article gives a
// share of near-zero entries, at most about 60 %, with no threshold).
import { describe, it, expect, beforeAll } from 'vitest';
import { loadAttnviz } from '../../web/wasm/attnviz.mjs';

let av;
beforeAll(async () => { av = await loadAttnviz({ source: new URL('../../build/wasm/attnviz.wasm', import.meta.url) }); });

/** sparsity_lt_0.01 and the row entropy against ln n of elu+1 on the first lesson's local inputs at n. */
function flat(n) {
  const lab = av.lab(n, 64);
  lab.generate('local', 1, 1);
  expect(lab.matrix({ variant: 'elu' }).status).toBe(0);
  const r = lab.readouts({ variant: 'elu' }, { sv: null });
  return { below: r['sparsity_lt_0.01'], flatness: r.row_entropy_mean / Math.log(n) };
}

describe('the hint of "weights below 0.01"', () => {
  let hint;
  beforeAll(() => { hint = av.registry.readouts.find((r) => r.key === 'sparsity_lt_0.01').explain; });

  it('says the fixed threshold reads 100 % on any flat map with n > 100, as the library computes', () => {
    const big = flat(256), small = flat(64);
    expect(big.flatness).toBeGreaterThan(0.95); // both maps are flat
    expect(small.flatness).toBeGreaterThan(0.95);
    expect(big.below).toBe(1);                  // n > 100: every weight is below 0.01
    expect(small.below).toBe(0);                // n = 64: every weight is about 1/64 > 0.01
    expect(hint).toMatch(/n > 100/);
    expect(hint).toMatch(/100 %/);
    expect(hint).toMatch(/τ\/n/);              // the measure that scales with n
  });

  it('does not present the threshold as the seed article\'s measure', () => {
    expect(hint).not.toMatch(/article's measure/);
    expect(hint).toMatch(/no threshold|names no threshold|without a threshold/);
  });
});
