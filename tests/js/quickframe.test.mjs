// quickframe.test.mjs: the heatmaps of a drag above FRAME_WORKER_MAX_N (web/compute/engine.mjs quickFrame; docs/page.md,
// "Large n") on the real wasm module. Factor variants: the block means from the factors equal the full
// frame's block means of M (av_lowrank_block_mean is exact for the mean downsample). Others: a draft on
// every s-th token, with the same cells and the positional knobs carried over.
import { describe, it, expect, beforeAll } from 'vitest';
import { loadAttnviz } from '../../web/wasm/attnviz.mjs';
import { Engine, FRAME_WORKER_MAX_N, DRAFT_N } from '../../web/compute/engine.mjs';
import { buildSchema } from '../../web/state/state.mjs';

let av, schema;
beforeAll(async () => {
  av = await loadAttnviz({ source: new URL('../../build/wasm/attnviz.wasm', import.meta.url) });
  schema = buildSchema(av.registry);
});

const maxRel = (a, b) => {
  let err = 0, top = 0;
  for (let i = 0; i < a.length; i++) { err = Math.max(err, Math.abs(a[i] - b[i])); top = Math.max(top, Math.abs(b[i])); }
  return err / top;
};

describe('quick frames above FRAME_WORKER_MAX_N', () => {
  const n = 2 * FRAME_WORKER_MAX_N;
  it.each([['elu', {}], ['focused', { p: 4 }], ['performer', { m: 64 }], ['linformer', {}], ['nystrom', {}]])(
    '%s: block means from the factors equal the full frame\'s', (variant, knobs) => {
      const e = new Engine(av);
      const req = schema.requestOf({ ...schema.defaults(), n, d: 32, variant, ...knobs });
      const full = e.frame(req, { readouts: false });
      const q = e.quickFrame(req);
      expect(q.quick).toBe('factors');
      expect(q.size).toBe(full.size);
      expect(q.b).toBe(full.b);
      expect(q.readouts).toBe(null);
      expect(maxRel(q.M, full.M)).toBeLessThan(2e-5);
      expect(q.A).toBe(full.A);                     // the full reference's cells, cached for these inputs
      expect(maxRel(q.D, full.D)).toBeLessThan(1e-3 * Math.max(1, 1 / maxRel(full.M, full.A)));
      e.free();
    });

  it('the max mode and variants without factors get a draft on every s-th token', () => {
    const e = new Engine(av);
    const s = Math.ceil(n / DRAFT_N);
    for (const [state, why] of [[{ variant: 'softmax' }, 'no factors'], [{ variant: 'elu', ds: 'max' }, 'max mode'],
      [{ variant: 'retention', causal: 1, decay: 0.99 }, 'no factors']]) {
      const req = schema.requestOf({ ...schema.defaults(), n, d: 32, ...state });
      const full = e.frame(req, { readouts: false });
      const q = e.quickFrame(req);
      expect(q.quick, why).toBe('draft');
      expect(q.draftStride).toBe(s);
      expect(q.size).toBe(full.size);
      expect(q.M.every(Number.isFinite)).toBe(true);
      // a draft, not the matrix; but where rows sum to one it is on M's scale (rescaled by 1/s). (A signed
      // map's draft samples one entry where the full frame averages many that partly cancel.)
      if (state.variant !== 'retention') {
        const mean = (x) => x.reduce((a, b) => a + b, 0) / x.length;
        expect(mean(q.M) / mean(full.M)).toBeGreaterThan(0.5);
        expect(mean(q.M) / mean(full.M)).toBeLessThan(2);
      }
    }
    e.free();
  });

  it('a draft carries decay and window over in tokens of the full sequence', () => {
    const e = new Engine(av);
    const req = schema.requestOf({ ...schema.defaults(), n, d: 32, variant: 'softmax', causal: 1, window: 64 });
    const q = e.quickFrame(req);
    expect(q.quick).toBe('draft');
    // a window of 64 tokens is 4 blocks of 16 wide: cells more than 4 blocks below the diagonal are 0
    const c = q.size, b = q.b;
    let outside = 0;
    for (let I = 0; I < c; I++) for (let J = 0; J < I - Math.ceil(64 / b) - 1; J++) outside += Math.abs(q.M[I * c + J]);
    expect(outside).toBe(0);
    e.free();
  });

  it('lab.factorBlockMean is null without factors and fails cleanly on bad knobs', () => {
    const lab = av.lab(64, 8);
    lab.generate('gaussian', 1, 1);
    expect(lab.factorBlockMean({ variant: 'softmax' }, 4)).toBe(null);
    const f = lab.factorBlockMean({ variant: 'elu' }, 4);
    expect(f.size).toBe(16);
    expect(f.M.length).toBe(256);
    lab.free();
  });
});
