// Colour tables, number formatting, heatmap downsampling and ranges, spectrum shaping: pure, no DOM.
import { describe, it, expect } from 'vitest';
import { colorTable, buildTable, colorIndex, luminance, COLORMAPS, hexToRgb } from '../../web/render/colormap.mjs';
import { fmt, fmtSigned, fmtCount, fmtBytes, fmtPct, fmtMs, fmtRatio, fmtWhole, ticks } from '../../web/render/format.mjs';
import { sharedRange, symmetricRange, paint, cellAt, quantile, selectKth } from '../../web/render/heatmap.mjs';
import { blockSize } from '../../web/compute/downsample.mjs';
import { normalisedSpectrum, errorCurve, rankAtRelative, plotLength, markerIndices } from '../../web/render/spectrum.mjs';
import { spectralReadouts } from '../../web/compute/spectral.mjs';
import { loadAttnviz } from '../../web/wasm/attnviz.mjs';
import { READOUT_INFO } from '../../web/wasm/readout-info.mjs';
import { READOUT_ROWS, costLine, rowReason, rowLabel, tolerance } from '../../web/render/readouts.mjs';
import { entropyBars, entropyNote } from '../../web/render/entropy.mjs';
import { floorDrawn, logTicks, powerLabel } from '../../web/render/charts.mjs';
import { Engine } from '../../web/compute/engine.mjs';
import { buildSchema } from '../../web/state/state.mjs';

describe('colour tables', () => {
  it('are 256 opaque RGBA entries with the published end points', () => {
    for (const name of COLORMAPS) {
      const t = colorTable(name);
      expect(t.length).toBe(1024);
      for (let i = 0; i < 256; i++) expect(t[4 * i + 3]).toBe(255);
    }
    const v = colorTable('viridis');
    expect([...v.subarray(0, 3)]).toEqual(hexToRgb('#440154'));
    expect([...v.subarray(1020, 1023)]).toEqual(hexToRgb('#fde725'));
    const d = colorTable('rdbu');
    expect([...d.subarray(0, 3)]).toEqual(hexToRgb('#053061'));      // most negative: dark blue
    expect([...d.subarray(1020, 1023)]).toEqual(hexToRgb('#67001f'));  // most positive: dark red
  });
  it('viridis gets monotonically lighter (readable in grey, colour-blind safe)', () => {
    const v = colorTable('viridis');
    for (let i = 1; i < 256; i++) expect(luminance(v, i)).toBeGreaterThanOrEqual(luminance(v, i - 1) - 1e-3);
    expect(luminance(v, 255) / luminance(v, 0)).toBeGreaterThan(20);
  });
  it('the diverging map is lightest in the middle and symmetric in lightness', () => {
    const d = colorTable('rdbu');
    const mid = luminance(d, 128);
    for (const i of [0, 40, 90, 165, 215, 255]) expect(luminance(d, i)).toBeLessThan(mid);
    expect(Math.abs(luminance(d, 30) - luminance(d, 225))).toBeLessThan(0.06);
  });
  it('interpolates between stops', () => {
    const t = buildTable(['#000000', '#ffffff']);
    expect([...t.subarray(4 * 128, 4 * 128 + 3)]).toEqual([128, 128, 128]);
  });
  it('maps values to indices, clamping, with -1 for NaN/Inf', () => {
    expect(colorIndex(0, 0, 1)).toBe(0);
    expect(colorIndex(1, 0, 1)).toBe(255);
    expect(colorIndex(0.5, 0, 1)).toBe(128);
    expect(colorIndex(-3, 0, 1)).toBe(0);
    expect(colorIndex(7, 0, 1)).toBe(255);
    expect(colorIndex(NaN, 0, 1)).toBe(-1);
    expect(colorIndex(Infinity, 0, 1)).toBe(-1);
    expect(colorIndex(2, 2, 2)).toBe(128);
  });
});

describe('number formatting', () => {
  it('fmt', () => {
    expect(fmt(0)).toBe('0');
    expect(fmt(0.123456)).toBe('0.123');
    expect(fmt(1234.5)).toBe('1230');
    expect(fmt(123456)).toBe('1.23e5');
    expect(fmt(1.5e-5)).toBe('1.5e-5');
    expect(fmt(-0.25)).toBe('−0.25');
    expect(fmt(null)).toBe('—');
    expect(fmt(NaN)).toBe('—');
    expect(fmt(Infinity)).toBe('∞');
    expect(fmt(2, 3)).toBe('2');
  });
  it('signed, counts, bytes, percentages, times, ticks', () => {
    expect(fmtSigned(0.012)).toBe('+0.012');
    expect(fmtSigned(-0.3)).toBe('−0.3');
    expect(fmtCount(4194304)).toBe('4.19M');
    expect(fmtCount(950)).toBe('950');
    expect(fmtCount(1.07e9)).toBe('1.07G');
    expect(fmtCount(-1)).toBe('—');
    expect(fmtBytes(512)).toBe('512 B');
    expect(fmtBytes(1536)).toBe('1.5 KiB');
    expect(fmtBytes(64 * 2 ** 20)).toBe('64 MiB');
    expect(fmtPct(0.5834)).toBe('58.3%');
    expect(fmtMs(3.24)).toBe('3.2 ms');
    expect(fmtMs(1250)).toBe('1.25 s');
    expect(ticks(0, 1, 3)).toEqual([0, 0.5, 1]);
  });
});

describe('heatmap helpers', () => {
  const n = 5;
  const M = Float32Array.from({ length: n * n }, (_, i) => i);
  it('block size keeps at most cap cells per side', () => {
    expect(blockSize(256)).toBe(1);
    expect(blockSize(1024)).toBe(4);
    expect(blockSize(4096)).toBe(16);
    expect(blockSize(300)).toBe(2);
  });
  // the cells come from the library (av_downsample) through the loader; both SIMD and scalar builds
  const holding = async (wasm, n, M, A = null) => {
    const av = await loadAttnviz({ source: new URL(`../../build/wasm/${wasm}`, import.meta.url) });
    const lab = av.lab(n, 2);
    lab.generate('gaussian', 1, 1);
    lab.matrix({ variant: 'softmax' });
    lab.reference({});
    lab.M.set(M);
    if (A) lab.A.set(A);
    return lab;
  };
  for (const wasm of ['attnviz.wasm', 'attnviz-scalar.wasm']) {
    it(`downsamples by block mean and block max, ragged last block included (${wasm})`, async () => {
      const lab = await holding(wasm, n, M);
      const mean = lab.downsample('M', 2, 'mean');
      expect(mean.length).toBe(9);
      expect(mean[0]).toBeCloseTo((0 + 1 + 5 + 6) / 4, 6);
      expect(mean[2]).toBeCloseTo((4 + 9) / 2, 6);
      expect(mean[8]).toBeCloseTo(24, 6);
      expect([...lab.downsample('M', 2, 'max')]).toEqual([6, 8, 9, 16, 18, 19, 21, 23, 24]);
      expect([...lab.downsample('M', 1)]).toEqual([...M]);
      expect(lab.downsample('M', 0)).toBe(null);
      expect(lab.downsample('M', n + 1)).toBe(null);
      expect(lab.downsample('S', 2)).toBe(null); // no scores() yet
    });
    it(`fills a recycled array of the right length in place, and makes a new one otherwise (${wasm})`, async () => {
      const lab = await holding(wasm, n, M);
      const want = [...lab.downsample('M', 2, 'max')];
      const out = new Float32Array(9).fill(-1);
      expect(lab.downsample('M', 2, 'max', out)).toBe(out);
      expect([...out]).toEqual(want);
      const short = new Float32Array(8);
      const got = lab.downsample('M', 2, 'max', short);
      expect(got).not.toBe(short);
      expect([...got]).toEqual(want);
      expect([...short]).toEqual(new Array(8).fill(0)); // left alone
      expect(lab.downsample('M', 2, 'max', new Float64Array(9))).not.toBeInstanceOf(Float64Array);
    });
    it(`mean downsampling preserves total mass per block area (${wasm})`, async () => {
      const R = Float32Array.from({ length: 64 * 64 }, (_, i) => ((i * 7919) % 97) / 97);
      const lab = await holding(wasm, 64, R);
      const d = lab.downsample('M', 8, 'mean');
      const s1 = R.reduce((a, b) => a + b, 0), s2 = d.reduce((a, b) => a + b, 0) * 64;
      expect(s2).toBeCloseTo(s1, 2);
    });
    it(`a NaN or an infinity makes its block non-finite in both modes (${wasm})`, async () => {
      const X = new Float32Array(16); X[5] = NaN; X[2] = -Infinity; X[0] = 7;
      const lab = await holding(wasm, 4, X);
      for (const mode of ['mean', 'max']) {
        const c = lab.downsample('M', 2, mode);
        expect(Number.isNaN(c[0])).toBe(true);
        expect(Number.isFinite(c[1])).toBe(false);
        expect(c[3]).toBe(0);
      }
    });
    it(`matches the plain definition on a ragged 263×263 matrix, by 3×3 blocks (${wasm})`, async () => {
      const N = 263, b = 3, c = Math.ceil(N / b);
      const X = Float32Array.from({ length: N * N }, (_, i) => Math.sin(i * 12.9898) * 43758.5453 % 1);
      const Y = Float32Array.from({ length: N * N }, (_, i) => Math.cos(i * 78.233) * 12345.678 % 1);
      const lab = await holding(wasm, N, X, Y);
      for (const diff of [false, true]) {
        const mean = lab.downsample(diff ? 'M-A' : 'M', b, 'mean'), max = lab.downsample(diff ? 'M-A' : 'M', b, 'max');
        for (let I = 0; I < c; I++) for (let J = 0; J < c; J++) {
          let s = 0, m = diff ? 0 : -Infinity, cnt = 0;
          for (let j = J * b; j < Math.min(N, J * b + b); j++) for (let i = I * b; i < Math.min(N, I * b + b); i++) {
            const v = diff ? Math.fround(X[i * N + j] - Y[i * N + j]) : X[i * N + j];
            s += diff ? X[i * N + j] - Y[i * N + j] : v; cnt += 1;
            if (diff ? Math.abs(v) > Math.abs(m) : v > m) m = v;
          }
          expect(Math.abs(mean[I * c + J] - s / cnt)).toBeLessThanOrEqual(2e-7 * Math.abs(s / cnt) + 1e-12);
          expect(max[I * c + J]).toBe(m);
        }
      }
    });
    it(`the difference map: block mean, or the signed entry of largest magnitude (${wasm})`, async () => {
      const A = new Float32Array(16), B = new Float32Array(16);
      B[0] = 0.5; B[1] = -0.9;
      const lab = await holding(wasm, 4, B, A);
      expect(lab.downsample('M-A', 2, 'mean')[0]).toBeCloseTo(-0.1, 6);
      expect(lab.downsample('M-A', 2, 'max')[0]).toBeCloseTo(-0.9, 6);
      lab.M.set(A); lab.A.set(B); // A − B: the sign follows
      expect(lab.downsample('M-A', 2, 'max')[0]).toBeCloseTo(0.9, 6);
    });
  }
  it('ranges: shared [0, q99.5] with clipping flagged; symmetric for the difference', () => {
    const a = new Float32Array(1000).fill(0.01); a[0] = 5;
    const r = sharedRange([a]);
    expect(r.lo).toBe(0);
    expect(r.hi).toBeCloseTo(0.01, 6);
    expect(r.clipped).toBe(true);
    const s = symmetricRange([Float32Array.from([-2, 1, 0.5])]);
    expect(s.lo).toBe(-s.hi);
    expect(quantile([Float32Array.from([3, 1, 2])], 0.5)).toBe(2);
  });
  it('selects the k-th smallest like a sort does, ties and all', () => {
    let seed = 7;
    const rand = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648; };
    for (const len of [1, 2, 3, 17, 100, 1001]) {
      const a = Float32Array.from({ length: len }, () => Math.floor(rand() * 20) / 4);
      const sorted = Float32Array.from(a).sort();
      for (const k of [0, len >> 1, len - 1]) expect(selectKth(Float32Array.from(a), len, k), `${len} ${k}`).toBe(sorted[k]);
    }
    const big = Float32Array.from({ length: 20000 }, (_, i) => (i * 7919) % 20000);
    expect(quantile([big], 0.995)).toBe(Float32Array.from(big.filter((_, i) => i % 3 === 0)).sort()[Math.round(0.995 * 6666)]);
  });
  it('rounds table indices half up, clamps out-of-range values, paints a flat range mid-table', () => {
    const t = colorTable('gray');
    const px = new Uint8ClampedArray(20);
    paint(px, Float32Array.from([0.5 / 255, 0.49 / 255, -3, 7, Infinity]), 5, t, 0, 1);
    expect([px[0], px[4], px[8], px[12], px[16], px[18]]).toEqual([t[4], t[0], t[0], t[255 * 4], 255, 255]);
    const flat = new Uint8ClampedArray(4);
    paint(flat, Float32Array.from([2]), 1, t, 2, 2);
    expect(flat[0]).toBe(t[128 * 4]);
  });
  it('paints through the table and counts non-finite cells (magenta)', () => {
    const t = colorTable('gray');
    const px = new Uint8ClampedArray(12);
    const bad = paint(px, Float32Array.from([0, 1, NaN]), 3, t, 0, 1);
    expect(bad).toBe(1);
    expect([...px.subarray(0, 4)]).toEqual([0, 0, 0, 255]);
    expect([...px.subarray(4, 8)]).toEqual([255, 255, 255, 255]);
    expect([...px.subarray(8, 12)]).toEqual([255, 0, 255, 255]);
  });
  it('maps a pointer position to a cell', () => {
    expect(cellAt(0, 0, 230, 230, 256)).toEqual({ row: 0, col: 0 });
    expect(cellAt(229.9, 115, 230, 230, 256)).toEqual({ row: 128, col: 255 });
    expect(cellAt(-1, 3, 230, 230, 256)).toBe(null);
  });
});

describe('spectrum shaping and readout text', () => {
  it('normalises by σ₁ and hides values at or below the noise floor', () => {
    expect(normalisedSpectrum(Float64Array.from([4, 2, 1e-9, 0]), 1e-8)).toEqual([1, 0.5, null, null]);
    expect(normalisedSpectrum(Float64Array.from([2, 1]), 0, 4)).toEqual([1, 0.5, null, null]);
  });
  it('error curve e(r) (Eckart–Young), exact from a top-k with the Frobenius total', () => {
    const e = errorCurve(Float64Array.from([2, 1, 1]));
    expect(e[0]).toBe(1);
    expect(e[1]).toBeCloseTo(2 / 6, 15);
    expect(e[2]).toBeCloseTo(1 / 6, 15);
    expect(e[3]).toBe(null);
    const top = errorCurve(Float64Array.from([2]), 6);
    expect(top[1]).toBeCloseTo(2 / 6, 15);
  });
  it('rank at a relative tolerance never counts below the floor', () => {
    const sv = Float64Array.from([1, 0.1, 1e-4, 1e-9]);
    expect(rankAtRelative(sv, 1e-3)).toBe(2);
    expect(rankAtRelative(sv, 1e-10)).toBe(4);
    expect(rankAtRelative(sv, 1e-10, 1e-8)).toBe(3);
  });
  it('every readout row has a label, a formula and a text for empty readouts', () => {
    for (const row of READOUT_ROWS) {
      expect(row.label.length).toBeGreaterThan(3);
      expect(row.tex.length).toBeGreaterThan(3);
      expect(typeof row.text({}, { n: 8, relRank: null })).toBe('string');
    }
    const rank = READOUT_ROWS.find((r) => r.id === 'rank');
    expect(rank.text({ rank: 64 }, { n: 256 })).toBe('64 / 256');
    expect(rank.text({ rank: 20, rank_bound: 'lower' }, { n: 4096, partial: true })).toBe('≥ 20 / 4096');
    const rel = READOUT_ROWS.find((r) => r.id === 'rank_rel');
    expect(rowLabel(rel, { relTol: -3 })).toBe('rank above 10⁻³·σ₁');
    expect(rel.text({}, { relRank: 64, relTol: -3 })).toBe('64');
    expect(tolerance(-2.5)).toBe('3.2·10⁻³');
    expect(tolerance(-10)).toBe('10⁻¹⁰');
    expect(rowLabel(rank, {})).toBe(rank.label);
    const kl = READOUT_ROWS.find((r) => r.id === 'row_kl_mean');
    expect(rowReason(kl, { row_kl_mean: null, row_kl_mean_reason: 'negative' })).toBe('negative');
    const dev = READOUT_ROWS.find((r) => r.id === 'row_sum_dev_max');
    expect(dev.text({ row_sum_dev_max: 0 }, {})).toBe('0');
    expect(dev.text({ row_sum_dev_max: 2.4e-7 }, {})).toBe('2.4e-7');
    expect(dev.text({ row_sum_dev_max: null }, {})).toBe('—');
  });
  it('cost line: the variant\'s own linear path against softmax\'s quadratic path, in words', () => {
    const sm = { quad_madds: 8388608, quad_bytes: 262144, linear_madds: null, linear_bytes: null };
    const line = costLine({ quad_madds: 9e9, quad_bytes: 262144, linear_madds: 2097152, linear_bytes: 16384 }, 256, { softmax: sm, label: 'elu+1' });
    expect(line).toBe('cost at n = 256: linear path of elu+1: 2.1M multiply-adds, 16 KiB; softmax\'s quadratic path: 8.39M multiply-adds, 256 KiB (linear is 4× cheaper)');
    expect(costLine(sm, 4, { softmax: sm, label: 'softmax' })).toMatch(/^cost at n = 4: softmax's quadratic path: .*; no linear path for softmax$/);
    expect(costLine(sm, 4)).toBe('cost: —'); // no softmax counts: nothing to weigh against
  });
  it('Performer\'s cost line weighs its linear path against softmax, not against its own n² path', async () => {
    // the performer-m lesson's sizes: Performer's own quadratic path costs more than its linear one, which
    // costs more than softmax; the line must say dearer (it said "linear 1.8× cheaper")
    const av = await loadAttnviz({ source: new URL('../../build/wasm/attnviz.wasm', import.meta.url) });
    const e = new Engine(av);
    const { defaults, requestOf } = buildSchema(av.registry);
    const f = e.frame(requestOf({ ...defaults(), variant: 'performer', n: 256, d: 64, m: 256 }));
    const soft = e.frame(requestOf({ ...defaults(), variant: 'softmax', n: 256, d: 64 })).cost;
    expect(f.softmaxCost).toEqual(soft);
    expect(f.cost.quad_madds).toBeGreaterThan(f.cost.linear_madds); // its own n² path is dearer still
    expect(f.cost.linear_madds).toBeGreaterThan(soft.quad_madds);
    const line = costLine(f.cost, 256, { softmax: f.softmaxCost, label: 'Performer' });
    expect(line).toContain(`linear path of Performer: ${fmtCount(f.cost.linear_madds)} multiply-adds`);
    expect(line).toContain(`softmax's quadratic path: ${fmtCount(soft.quad_madds)} multiply-adds`);
    expect(line).toMatch(new RegExp(`\\(linear is ${fmtRatio(f.cost.linear_madds / soft.quad_madds).replace('.', '\\.')}× dearer\\)$`));
    // a feature dimension above the count's limit ((1 + s/N)^N at d = 8, N = 8: 9⁸ features) is uncounted, not absent
    const big = e.frame(requestOf({ ...defaults(), variant: 'explimit', n: 256, d: 8, N: 8 }));
    expect(big.cost.linear_madds).toBe(null);
    expect(big.costFeatureDim).toBe(9 ** 8);
    const said = costLine(big.cost, 256, { softmax: big.softmaxCost, featureDim: big.costFeatureDim, label: 'v' });
    expect(said).toMatch(/linear path of v: not counted, its feature dimension 43M is above the count's limit and above n, so it is dearer than softmax's$/);
    expect(said).not.toMatch(/no linear path/);
    expect(e.frame(requestOf({ ...defaults(), variant: 'softmax', n: 256, d: 8 })).costFeatureDim).toBe(null); // softmax: no linear path at all
    e.free();
  });
  it('says "about the same cost" where the ratio rounds to 1, and gives ratios a sensible precision', () => {
    const line = (q, l) => costLine({ quad_madds: 1, quad_bytes: 1, linear_madds: l, linear_bytes: 1 }, 64, { softmax: { quad_madds: q, quad_bytes: 1 }, label: 'v' });
    expect(line(1000, 1000)).toMatch(/\(about the same cost\)$/);
    expect(line(1040, 1000)).toMatch(/\(about the same cost\)$/);
    expect(line(1000, 1040)).toMatch(/\(about the same cost\)$/);
    for (const [q, l] of [[1000, 1000], [1040, 1000], [1000, 1040], [1000, 1020]]) expect(line(q, l)).not.toMatch(/\b1× /);
    expect(line(1300, 1000)).toMatch(/linear is 1\.3× cheaper\)$/);
    expect(line(1000, 1300)).toMatch(/linear is 1\.3× dearer\)$/); // no reason given: Nyström's has no feature dimension
    expect(line(3950, 1000)).toContain('linear is 4× cheaper');
    expect(line(32768, 1024)).toContain('linear is 32× cheaper');
    expect(line(1234567, 1000)).toContain('linear is 1,235× cheaper');
    expect([0.5, 1, 1.04, 1.06, 2.345, 9.94, 9.96, 12.4, 1024].map(fmtRatio)).toEqual(['0.5', '1', '1', '1.1', '2.3', '9.9', '10', '12', '1,024']);
    expect([0, -1, NaN, Infinity, null].map(fmtRatio)).toEqual(['—', '—', '—', '—', '—']);
  });

  it('writes whole numbers as Intl.NumberFormat(\'en\') does, without making one', () => {
    const intl = new Intl.NumberFormat('en');
    const values = [0, -0, 1, 9, 10, 99, 100, 999, 1000, 1001, 12480, 999999, 1000000, 1234567, -1, -999, -1000, -1234567,
      2 ** 31, 2 ** 53, -(2 ** 53), 1e20, 999999999999999999999, 1e21, 1e21 + 5e5, 1234.5678, -0.5, 0.1, NaN, Infinity, -Infinity];
    for (let e = 0; e < 21; e++) values.push(10 ** e, 10 ** e - 1, -(10 ** e) + 1, 7 * 10 ** e + 3);
    for (const x of values) expect(fmtWhole(x), String(x)).toBe(intl.format(x));
  });
});

describe('spectral readouts from σ on the page', () => {
  it('equal the library\'s av_readouts on the same singular values', async () => {
    const av = await loadAttnviz({ source: new URL('../../build/wasm/attnviz.wasm', import.meta.url) });
    const n = 96, lab = av.lab(n, 16);
    lab.generate('gaussian', 1, 3);
    for (const knobs of [{ variant: 'focused', p: 3 }, { variant: 'softmax' }, { variant: 'elu', causal: true }]) {
      lab.matrix(knobs);
      const { sv, floor } = lab.spectrum('M', 'fast');
      const lib = lab.readouts(knobs, { sv, floor, tau: 0.1 });
      const js = spectralReadouts(sv, floor, n);
      for (const k of ['sigma1', 'rank', 'rank_tol', 'rank_rel_1e-3', 'rank_rel_1e-2', 'rank_energy_99', 'effective_rank', 'stable_rank', 'noise_floor']) {
        expect(js[k], `${knobs.variant} ${k}`).toBeCloseTo(lib[k], 12);
      }
    }
    // a zero matrix: the library and the page agree on every spectral readout and its reason
    const zero = new Float64Array(n);
    const lib0 = lab.readouts({ variant: 'softmax' }, { sv: zero, floor: 0 });
    const js0 = spectralReadouts(zero, 0, n);
    for (const k of ['rank', 'rank_rel_1e-3', 'rank_energy_99', 'effective_rank', 'stable_rank']) {
      expect(js0[k], `zero matrix ${k}`).toBe(lib0[k]);
    }
    lab.free();
  });
  it('say why when σ is missing, zero or not finite', () => {
    expect(spectralReadouts(null, 0, 2, { reason: 'no spectrum: the input holds NaN or Inf' }).rank_reason).toMatch(/no spectrum: .*NaN/);
    expect(spectralReadouts(Float64Array.from([0, 0]), 0, 2).stable_rank_reason).toMatch(/zero/);
    expect(spectralReadouts(Float64Array.from([NaN, 1]), 0, 2).rank_reason).toMatch(/NaN/);
    expect(spectralReadouts(new Float64Array(0), 0, 2).sigma1).toBe(null);
    const part = spectralReadouts(Float64Array.from([3, 2, 1]), 0, 100, { partial: true, fro2: 20 });
    expect(part.effective_rank).toBe(null);
    expect(part.stable_rank).toBeCloseTo(20 / 9, 14);
  });
});

describe('row-entropy histogram', () => {
  it('the loader bins each row\'s entropy over [0, ln n] and counts rows left out', async () => {
    const av = await loadAttnviz({ source: new URL('../../build/wasm/attnviz.wasm', import.meta.url) });
    const n = 32, lab = av.lab(n, 8);
    lab.generate('gaussian', 1, 1);
    lab.matrix({ variant: 'softmax' });
    const M = lab.M;
    M.fill(0);
    for (let i = 0; i < n; i++) M[i * n + i] = 1;            // one-hot rows: entropy 0
    for (let j = 0; j < n; j++) M[3 * n + j] = 1;            // a uniform row: entropy ln n, top bin
    M[5 * n + 5] = -1;                                       // a negative entry: left out
    const h = lab.entropyHistogram('M', 8, false);
    expect(h.status).toBe(1);
    expect(h.message.length).toBeGreaterThan(0);
    expect(h.top).toBeCloseTo(Math.log(n), 12);
    expect([...h.counts]).toEqual([n - 2, 0, 0, 0, 0, 0, 0, 1]);
    expect(h.left).toBe(1);
    lab.free();
  });
  it('the engine gives M\'s histogram each time and softmax A\'s with its mean', async () => {
    const av = await loadAttnviz({ source: new URL('../../build/wasm/attnviz.wasm', import.meta.url) });
    const e = new Engine(av);
    const { defaults, requestOf } = buildSchema(av.registry);
    const st = { ...defaults(), n: 64, d: 16, variant: 'focused' };
    const lo = e.frame(requestOf({ ...st, p: 1 })).readouts.entropy_hist;
    const hi = e.frame(requestOf({ ...st, p: 6 })).readouts.entropy_hist;
    expect(lo.M.counts.reduce((a, b) => a + b, 0)).toBe(64);
    expect(hi.A).toBe(lo.A);                                 // cached: the inputs did not change
    expect(hi.M.mean).toBeLessThan(lo.M.mean);               // sharper rows: lower entropy
    expect(lo.A.mean).toBeGreaterThan(0);
    expect(lo.A.mean).toBeLessThanOrEqual(Math.log(64));
    e.free();
  });
  it('shapes bars as fractions of the rows counted, and means as fractions of ln n', () => {
    const hist = { bins: 4, top: 2, uniform: 1.6, M: { counts: Int32Array.from([1, 3, 0, 0]), left: 0, mean: 0.5 }, A: { counts: Int32Array.from([0, 0, 2, 2]), left: 0, mean: 1.5 } };
    const b = entropyBars(hist);
    expect([...b.M]).toEqual([0.25, 0.75, 0, 0]);
    expect([...b.A]).toEqual([0, 0, 0.5, 0.5]);
    expect(b.max).toBe(0.75);
    expect(b.meanM).toBe(0.25);
    expect(b.meanA).toBe(0.75);
    expect(entropyBars(null)).toBe(null);
    expect(entropyBars({ ...hist, M: { counts: null, mean: null }, A: null }).M).toBe(null);
    expect(b.uniform).toBe(0.8);
    expect(entropyNote(hist)).toMatch(/M 0\.5 \(solid\), softmax 1\.5 \(dashed\) · uniform 1\.6 .*ln n = 2/);
    expect(entropyNote({ ...hist, M: { ...hist.M, left: 3 } })).toMatch(/3 rows of M left out/);
  });
});

describe('log axes and the plotted range', () => {
  const exps = (t) => [...t.labelled].map((v) => Math.log10(v)).sort((a, b) => a - b);
  it('labels powers of ten only, at most one per decade, fewer where decades are close', () => {
    const roomy = logTicks(1e-4, 1.5, 400, 24);          // 100 px a decade
    expect(exps(roomy)).toEqual([-4, -3, -2, -1, 0]);
    expect(roomy.step).toBe(1);
    expect(roomy.splits.length).toBe(5);                 // no minor lines below 6 × 24 px a decade
    const dense = logTicks(1e-12, 1.5, 120, 24);         // about 10 px a decade
    expect(dense.step).toBe(3);
    expect(exps(dense)).toEqual([-12, -9, -6, -3, 0]);   // 10⁰ always among them
    for (const [lo, hi, px, gap] of [[1e-16, 1.5, 60, 24], [1e-9, 1.5, 90, 26], [3e-7, 1.5, 300, 40], [1, 4096, 500, 50]]) {
      const t = logTicks(lo, hi, px, gap);
      const perDecade = px / Math.log10(hi / lo);
      expect(t.step * perDecade, `${lo} ${hi} ${px}`).toBeGreaterThanOrEqual(gap); // labels never closer than gap
      for (const v of t.labelled) { expect(Number.isInteger(Math.round(Math.log10(v) * 1e9) / 1e9)).toBe(true); expect(v).toBeGreaterThanOrEqual(lo); expect(v).toBeLessThanOrEqual(hi); }
    }
    const tall = logTicks(1e-2, 1.5, 600, 20);            // 260 px a decade: grid lines at 2…9 × 10ᵉ, unlabelled
    expect(tall.splits.length).toBeGreaterThan(tall.labelled.size);
    expect(tall.splits).toContain(0.05);
    expect(tall.labelled.has(0.05)).toBe(false);
    expect(logTicks(1, 1, 100, 20).splits).toEqual([]);
    expect(logTicks(0, 1, 100, 20).splits).toEqual([]);
  });
  it('writes 1, 10⁻³ on σ axes and 10, 1,000 on index axes', () => {
    expect([1, 0.1, 1e-3, 1e-12].map((v) => powerLabel(v))).toEqual(['1', '10⁻¹', '10⁻³', '10⁻¹²']);
    expect([1, 10, 1000].map((v) => powerLabel(v, true))).toEqual(['1', '10', '1,000']);
  });

  it('places markers evenly along a curve, and apart where it is squeezed into a few pixels', () => {
    const curve = Array.from({ length: 1024 }, (_, i) => (i < 64 ? 1 / (i + 1) : null)); // d = 64 values of n = 1024
    const picked = markerIndices(curve, 9, 0);
    expect(picked).toEqual([0, 7, 14, 21, 28, 35, 42, 49, 56]);
    expect(markerIndices(curve, 9, 0, (j) => 10 * j, 19)).toEqual(picked); // wide: all nine
    const squeezed = markerIndices(curve, 9, 0, (j) => 0.55 * j, 19); // 64 values over 35 px
    expect(squeezed.length).toBe(2); // the start and one 19 px on, not nine in 35 px
    expect(squeezed[0]).toBe(0);
    expect(0.55 * squeezed[1]).toBeGreaterThanOrEqual(19);
    expect(markerIndices([null, 2, null], 9, 0, (j) => j, 19)).toEqual([1]); // one value: one marker
    expect(markerIndices([null, null], 9, 0, (j) => j, 19)).toEqual([]);
    // on a log axis, evenly in pixels: along the whole curve, not all but one in its first decade
    const all = Array.from({ length: 1024 }, () => 1), logPx = (j) => 200 * Math.log10(j + 1);
    const onLog = markerIndices(all, 9, 0.5, logPx, 19);
    expect(onLog.length).toBe(9);
    expect(onLog.at(-1)).toBeGreaterThan(600);
    for (let k = 1; k < onLog.length; k++) expect(logPx(onLog[k]) - logPx(onLog[k - 1])).toBeGreaterThan(19);
    // staggered curves: different offsets, different positions
    expect(markerIndices(all, 9, 0.25, logPx, 19)).not.toEqual(markerIndices(all, 9, 0.75, logPx, 19));
  });
  it('keeps the x range up to the last value of any curve, or a mark', () => {
    const z = (k, n) => [...new Array(k).fill(1), ...new Array(n - k).fill(null)];
    expect(plotLength([z(64, 2048), z(24, 2048)])).toBe(64);
    expect(plotLength([z(64, 2048), z(24, 2048)], 65)).toBe(65);
    expect(plotLength([z(3, 256), z(256, 256)])).toBe(256);
    expect(plotLength([z(0, 10), [null]])).toBe(2);
    expect(plotLength([z(5, 10)], 99)).toBe(10);           // never beyond the longest curve
  });
});

describe('spectrum chart marks', () => {
  it('draws the noise floor only where the plotted range reaches it', () => {
    expect(floorDrawn(1e-7)).toBe(true);
    expect(floorDrawn(1e-9)).toBe(true);
    expect(floorDrawn(6e-13)).toBe(false);
    expect(floorDrawn(0)).toBe(false);
  });
});

describe('the readout panel: every — says why (issue 28)', () => {
  // every readout undefined, as the library gives them (null with <key>_reason) and the page's spectral
  // readouts without a spectrum: each row that shows '—' must have a reason to show beside it
  it('gives a reason for each row that shows —', () => {
    const names = READOUT_INFO.map((x) => x.key); // every readout of the library (its registry)
    expect(names.length).toBeGreaterThan(0);
    const r = {};
    for (const k of names) { r[k] = null; r[`${k}_reason`] = `${k} is undefined here`; }
    Object.assign(r, spectralReadouts(null, 0, 64, { reason: 'the spectrum failed' }));
    const ctx = { n: 64, relRank: null, relTol: -3, partial: false, ceiling: null, semiCeiling: null };
    for (const row of READOUT_ROWS) {
      const text = row.text(r, ctx);
      if (text.includes('—')) expect(rowReason(row, r), row.id).not.toBe('');
    }
  });
});
