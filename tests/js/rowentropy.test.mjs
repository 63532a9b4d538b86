// rowentropy.test.mjs: the row-entropy histogram from the entropies av_readouts_rows kept (web/wasm/lab.mjs
// rowEntropyHistogram, used by Engine.plainReadouts) is the histogram of av_row_entropy_hist's own pass,
// count for count, on the real wasm module; it belongs to the matrix the readouts read, never a newer one.
import { describe, it, expect, beforeAll } from 'vitest';
import { loadAttnviz } from '../../web/wasm/attnviz.mjs';
import { Engine } from '../../web/compute/engine.mjs';
import { buildSchema } from '../../web/state/state.mjs';

let av;
beforeAll(async () => { av = await loadAttnviz({ source: new URL('../../build/wasm/attnviz.wasm', import.meta.url) }); });

describe('row entropies kept by the readouts', () => {
  it.each([['elu', false], ['focused', true], ['performer', false], ['softmax', true]])('%s (causal %s): the same counts as a pass of its own', (variant, causal) => {
    const lab = av.lab(96, 16);
    lab.generate('gaussian', 1.5, 4);
    expect(lab.matrix({ variant, causal }).status).toBeGreaterThanOrEqual(0);
    const r = lab.readouts({ variant, causal }, { sv: null, rows: true });
    expect(r.status).toBe(0);
    for (const bins of [1, 7, 24]) {
      const kept = lab.rowEntropyHistogram(bins), own = lab.entropyHistogram('M', bins, causal);
      expect(kept.of).toBe('M');
      expect(kept.causal).toBe(causal);
      expect(Array.from(kept.counts)).toEqual(Array.from(own.counts));
      expect(kept.left).toBe(own.left);
      expect(kept.status).toBe(own.status);
      expect(kept.top).toBe(own.top);
    }
    expect(lab.rowEntropyHistogram(0).status).toBe(av.STATUS.ERR_SIZE);
    lab.matrix({ variant: 'relu', causal }); // a new M: the kept entropies no longer describe it
    expect(lab.rowEntropyHistogram(8)).toBe(null);
    lab.readouts({ variant: 'relu', causal }, { sv: null }); // readouts without rows keep none
    expect(lab.rowEntropyHistogram(8)).toBe(null);
    lab.free();
  });

  it('Engine.plainReadouts bins M from the kept entropies: the histogram of its own pass', () => {
    const schema = buildSchema(av.registry), e = new Engine(av);
    const req = schema.requestOf({ ...schema.defaults(), n: 128, d: 16, variant: 'elu' });
    const out = e.plainReadouts(req);
    const own = e.lab.entropyHistogram('M', out.entropy_hist.bins, false);
    expect(Array.from(out.entropy_hist.M.counts)).toEqual(Array.from(own.counts));
    expect(out.entropy_hist.M.left).toBe(own.left);
    expect(out.entropy_hist.M.of).toBeUndefined(); // the same shape as before
    expect(out.entropy_hist.M.mean).toBe(out.row_entropy_mean);
    e.free();
  });
});
