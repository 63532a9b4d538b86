// row-stats.test.mjs: the single-row view's statistics (web/compute/row-stats.mjs) against the definitions of
// docs/readouts.md written out here for hand-made rows, and against the library's own means: over every row
// of a matrix, the mean of rowStats is av_readouts' row_entropy_mean and keys_for_90.
import { describe, it, expect, beforeAll } from 'vitest';
import { rowStats } from '../../web/compute/row-stats.mjs';
import { loadAttnviz } from '../../web/wasm/attnviz.mjs';

describe('rowStats', () => {
  it('a uniform row of m keys: entropy ln m, keys for 90 % ⌈0.9 m⌉', () => {
    for (const m of [1, 2, 7, 10, 64, 255]) {
      const s = rowStats(new Float32Array(m).fill(1 / m));
      expect(s.entropy).toBeCloseTo(Math.log(m), 12);
      expect(s.keys90).toBe(Math.ceil(0.9 * m));
      expect(s.uniform).toBe(Math.log(m));
    }
  });

  it('a one-hot row: entropy 0, one key; weights are normalised by the row sum first', () => {
    expect(rowStats(Float32Array.of(0, 0, 3, 0))).toMatchObject({ entropy: 0, keys90: 1, sum: 3 });
    // p = (0.5, 0.25, 0.25): H = 0.5 ln 2 + 2·0.25 ln 4 = 1.5 ln 2; 0.5 + 0.25 < 0.9 needs all three
    const s = rowStats(Float32Array.of(2, 1, 1));
    expect(s.entropy).toBeCloseTo(1.5 * Math.LN2, 12);
    expect(s.keys90).toBe(3);
    expect(rowStats(Float32Array.of(0.95, 0.05)).keys90).toBe(1);
  });

  it('reads only the m allowed entries (a causal row)', () => {
    const s = rowStats(Float32Array.of(1, 1, 5, 5), 2);
    expect(s.entropy).toBeCloseTo(Math.LN2, 12);
    expect(s.keys90).toBe(2);
    expect(s.uniform).toBe(Math.LN2);
  });

  it('is undefined, with a reason, for negative, zero or non-finite rows', () => {
    for (const row of [Float32Array.of(1, -0.1, 0.5), Float32Array.of(0, 0), Float32Array.of(1, NaN)]) {
      const s = rowStats(row);
      expect(s.entropy).toBe(null);
      expect(s.keys90).toBe(null);
      expect(s.reason).toMatch(/^the row /);
    }
    // the sum is still the row's (docs/inspection.md documents it): only a non-finite entry leaves it unknown
    expect(rowStats(Float32Array.of(1, -0.25, 0.5)).sum).toBe(1.25);
    expect(rowStats(Float32Array.of(0, 0)).sum).toBe(0);
    expect(rowStats(Float32Array.of(1, NaN)).sum).toBe(null);
  });
});

describe('rowStats against the library', () => {
  let av;
  beforeAll(async () => { av = await loadAttnviz({ source: new URL('../../build/wasm/attnviz.wasm', import.meta.url) }); });

  it.each([['elu', false], ['focused', true], ['softmax', false], ['hedgehog', true]])('%s (causal %s): the mean over rows is av_readouts\'', (variant, causal) => {
    const n = 96, lab = av.lab(n, 16);
    lab.generate('clustered', 1, 3);
    expect(lab.matrix({ variant, causal }).status).toBeGreaterThanOrEqual(0);
    const r = lab.readouts({ variant, causal }, { sv: null });
    let h = 0, k = 0;
    for (let i = 0; i < n; i++) {
      const s = rowStats(lab.M.subarray(i * n, (i + 1) * n), causal ? i + 1 : n);
      h += s.entropy; k += s.keys90;
    }
    expect(h / n).toBeCloseTo(r.row_entropy_mean, 9);
    expect(k / n).toBe(r.keys_for_90);
    lab.free();
  });
});

describe('the row view\'s bars (render/rowbars.mjs laneColumns)', () => {
  it('keep a single spike among more keys than pixels, and leave masked keys out', async () => {
    const { laneColumns } = await import('../../web/render/rowbars.mjs');
    const row = new Float32Array(1000).fill(1e-4);
    row[537] = 0.9;
    const { hi, lo } = laneColumns(row, 1000, 100);
    expect(hi[53]).toBeCloseTo(0.9, 6);    // a mean over the column's 10 keys would show 0.09
    expect(lo[53]).toBeCloseTo(1e-4, 9);
    expect(Math.max(...hi.filter((_, c) => c !== 53))).toBeCloseTo(1e-4, 9);
    const causal = laneColumns(row, 500, 100); // keys 500… masked
    expect(Number.isNaN(causal.hi[50])).toBe(true);
    expect(causal.hi[49]).toBeCloseTo(1e-4, 9);
  });
});
