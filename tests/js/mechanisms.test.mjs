// mechanisms.test.mjs: the mechanism views' computations (web/compute/mechanisms.mjs and the loader's recall,
// stepper and distiller) in the real wasm module, against the native CLI and against their own claims.
import { describe, it, expect, beforeAll } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAttnviz } from '../../web/wasm/attnviz.mjs';
import { stepFrame, scalingRun, crossover, recallCurve, overwrite, meanRowKL, memoryBytes } from '../../web/compute/mechanisms.mjs';
import { npyBytes } from '../../web/io/export.mjs';

const writeNpy = (path, data, shape) => writeFileSync(path, npyBytes(data, shape));

const ROOT = new URL('../../', import.meta.url);
const CLI = new URL('build/native/attnviz', ROOT).pathname;
const tmp = mkdtempSync(join(tmpdir(), 'attnviz-mech-'));
const cli = (...args) => JSON.parse(execFileSync(CLI, args.map(String), { encoding: 'utf8' }));

let av;
beforeAll(async () => { av = await loadAttnviz({ simdUrl: new URL('build/wasm/attnviz.wasm', ROOT), scalarUrl: new URL('build/wasm/attnviz-scalar.wasm', ROOT) }); });

describe('the recurrence stepper', () => {
  const cases = [
    { variant: 'elu' }, { variant: 'elu', decay: 0.9 }, { variant: 'performer', m: 32 }, { variant: 'retention' },
    { variant: 'deltanet', beta: 0.6 }, { variant: 'cosformer' }, { variant: 'hedgehog' },
  ];
  for (const knobs of cases) {
    it(`${JSON.stringify(knobs)}: every step's output row is the masked matrix's row times V`, () => {
      const lab = av.lab(40, 8, 8);
      try {
        lab.generate('gaussian', 0.8, 3);
        const { stepper, status } = lab.stepper(knobs);
        expect(status).toBeGreaterThanOrEqual(0);
        expect(stepper.kind).toBe('state');
        let worst = 0;
        for (let t = 1; t <= 40; t++) {
          const f = stepFrame(stepper, t);
          worst = Math.max(worst, f.diff / Math.max(1, f.rowMax));
          expect(f.S.length).toBe(f.r * 8);
          expect(f.stateBytes).toBe(4 * (f.r * 8 + f.r)); // constant
          expect(f.cacheBytes).toBe(4 * t * 16);          // one row of k and v per token
        }
        expect(worst).toBeLessThan(2e-5);
        const back = stepFrame(stepper, 5); // going back replays from the start: the same state
        const again = stepFrame(stepper, 5);
        expect(Array.from(back.S)).toEqual(Array.from(again.S));
        expect(back.diff).toBeLessThan(2e-5);
      } finally { lab.free(); }
    });
  }
  it('softmax keeps a cache: the cache path row equals the matrix row, with no state', () => {
    const lab = av.lab(30, 8, 8);
    try {
      lab.generate('gaussian', 1, 2);
      const { stepper } = lab.stepper({ variant: 'softmax', window: 6 });
      expect(stepper.kind).toBe('cache');
      const f = stepFrame(stepper, 20, 6);
      expect(f.S).toBeUndefined();
      expect(f.diff).toBeLessThan(1e-5);
      expect(f.cacheBytes).toBe(memoryBytes(0, 8, 8, 20, 6).cache);
      expect(f.cacheBytes).toBe(4 * 6 * 16);
    } finally { lab.free(); }
  });
  it('refuses variants without a recurrent form', () => {
    const lab = av.lab(16, 4, 4);
    try {
      lab.generate('gaussian', 1, 1);
      const r = lab.stepper({ variant: 'linformer' });
      expect(r.stepper).toBeNull();
      expect(r.status).toBeLessThan(0);
    } finally { lab.free(); }
  });
});

describe('recall', () => {
  const cases = [
    ['retention', { decay: 1 }, ['--decay', 1]],
    ['deltanet', { decay: 1, beta: 1 }, ['--decay', 1, '--beta', 1]],
    ['softmax', { scale: 4 }, ['--scale', 4]],
    ['elu', { decay: 0.95 }, ['--decay', 0.95]],
  ];
  for (const [variant, knobs, flags] of cases)
    it(`${variant} ${JSON.stringify(knobs)}: wasm equals native over the same draws`, () => {
      const r = av.recall({ variant, ...knobs }, { pairs: 48, d: 16, seeds: 4 });
      const c = cli('recall', '--variant', variant, ...flags, '--pairs', 48, '--d', 16, '--seeds', 4);
      expect(r.status).toBe(0);
      for (let s = 0; s < 4; s++) expect(r.perSeed[s]).toBeCloseTo(c.recall_error[s], 6);
      expect(r.mean).toBeCloseTo(c.recall_error_mean, 6);
    });
  it('the linear state follows √((N−1)/d) and the delta rule beats it at every N', () => {
    const mems = [{ id: 'lin', knobs: { variant: 'retention', decay: 1 } }, { id: 'delta', knobs: { variant: 'deltanet', decay: 1, beta: 1 } }];
    const pts = [...recallCurve(av, { memories: mems, Ns: [4, 16, 64, 256], d: 32, seeds: 8 })];
    for (const N of [4, 16, 64, 256]) {
      const lin = pts.find((p) => p.N === N && p.memory === 'lin'), del = pts.find((p) => p.N === N && p.memory === 'delta');
      expect(Math.abs(lin.mean / Math.sqrt((N - 1) / 32) - 1)).toBeLessThan(0.1);
      expect(del.mean).toBeLessThan(lin.mean);
    }
  });
  it('one key overwritten: the delta rule returns v′, the linear state a blend', () => {
    const [lin, del] = overwrite(av, { memories: [{ id: 'lin', knobs: { variant: 'retention', decay: 1 } }, { id: 'delta', knobs: { variant: 'deltanet', decay: 1, beta: 1 } }], N: 1, d: 32 });
    expect(del.errNew).toBeLessThan(1e-5);
    expect(lin.errNew).toBeGreaterThan(0.3); // v + v′ against v′
    expect(lin.errOld).toBeGreaterThan(0.3);
  });
  it('own pairs, and refusals with the library\'s reason', () => {
    const K = new Float32Array([1, 0, 0, 1]), V = new Float32Array([1, 2, 3, 4]);
    const r = av.recall({ variant: 'deltanet', decay: 1, beta: 1 }, { K, V, pairs: 2, d: 2 });
    expect(Array.from(r.errors).every((e) => e < 1e-6)).toBe(true);
    const bad = av.recall({ variant: 'linformer' }, { pairs: 4, d: 4 });
    expect(bad.errors).toBeNull();
    expect(bad.status).toBe(av.STATUS.ERR_NO_LINEAR);
  });
});

describe('Hedgehog distillation', () => {
  it('the loss per step equals the native CLI\'s, and the trained W is the variant\'s W', () => {
    const n = 24, d = 6;
    const lab = av.lab(n, d, d);
    try {
      lab.generate('clustered', 1, 4);
      writeNpy(join(tmp, 'q.npy'), lab.Q.slice(), [n, d]);
      writeNpy(join(tmp, 'k.npy'), lab.K.slice(), [n, d]);
      const { distiller } = lab.distiller({ causal: true });
      const a = distiller.steps(12, 0.05), b = distiller.steps(8, 0.05);
      const c = cli('distill', '--q', join(tmp, 'q.npy'), '--k', join(tmp, 'k.npy'), '--causal', '--steps', 20, '-o', join(tmp, 'w.npy'));
      const loss = [...a.loss, ...b.loss];
      for (let i = 0; i < 20; i++) expect(Math.abs(loss[i] - c.loss[i])).toBeLessThan(1e-7 * Math.max(1, c.loss[i]));
      const end = distiller.loss();
      expect(Math.abs(end - c.loss_end)).toBeLessThan(1e-6);
      expect(end).toBeLessThan(loss[0]);
      // the loss is the KL to softmax of the hedgehog matrix with the trained W
      const W = distiller.W;
      lab.reference({ causal: true });
      const A = lab.A.slice();
      lab.matrix({ variant: 'hedgehog', causal: true, hedgehog_w: W });
      expect(Math.abs(meanRowKL(A, lab.M, n, true) - end)).toBeLessThan(1e-4);
      distiller.free();
    } finally { lab.free(); }
  });
});

describe('scaling', () => {
  it('measures each path while it fits the budget, and stops the quadratic path at it', () => {
    const budget = 4 * 2 ** 20;
    const pts = [...scalingRun(av, { knobs: { variant: 'elu', causal: true }, d: 16, budget, maxN: 4096 })];
    const q = pts.filter((p) => p.path === 'quadratic');
    expect(q.at(-1).skipped).toBe('budget');
    for (const p of pts) if (!p.skipped) { expect(p.bytes).toBeLessThanOrEqual(budget); expect(p.ms).toBeGreaterThanOrEqual(0); }
    expect(pts.filter((p) => p.path === 'chunkwise' && !p.skipped).length).toBeGreaterThan(0);
    const lin = pts.filter((p) => p.path === 'linear' && !p.skipped);
    expect(lin.at(-1).n).toBeGreaterThan(q.filter((p) => !p.skipped).at(-1).n);
  });
  it('the operation-count crossover sits near the feature dimension', () => {
    const c = crossover(av, { variant: 'elu' }, 64);
    expect(c.r).toBe(64);
    expect(c.n).toBeGreaterThan(16);
    expect(c.n).toBeLessThan(256);
  });
  it('the crossover is against softmax\'s quadratic path, not the variant\'s own n² path', () => {
    // Performer's own n² path costs n²·m more than softmax's: against it the "crossover" fell near n = 100,
    // below its feature dimension m = 256, where its linear path still costs more than softmax
    const c = crossover(av, { variant: 'performer', m: 256 }, 64);
    expect(c.r).toBe(256);
    expect(c.n).toBeGreaterThan(c.r);
    const lab = av.lab(c.n, 64, 64, false);
    try {
      expect(lab.cost({ variant: 'performer', m: 256 }).linear_madds).toBeLessThanOrEqual(lab.cost({ variant: 'softmax' }).quad_madds);
    } finally { lab.free(); }
  });
});
