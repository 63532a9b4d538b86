// summary.test.mjs: readouts against a kept summary of the reference (web/wasm/lab.mjs readouts' opts.summary:
// av_reference_summary once, av_readouts_summarised per matrix) are the readouts without it, value for value,
// on the real wasm module; the summary is reused while its key stays and made afresh when the key, the mask,
// or the lab's own reference or inputs change.
import { describe, it, expect, beforeAll } from 'vitest';
import { loadAttnviz } from '../../web/wasm/attnviz.mjs';
import { Engine } from '../../web/compute/engine.mjs';
import { buildSchema } from '../../web/state/state.mjs';

let av;
beforeAll(async () => { av = await loadAttnviz({ source: new URL('../../build/wasm/attnviz.wasm', import.meta.url) }); });

const plain = (r) => Object.fromEntries(Object.entries(r).filter(([k]) => k !== 'singular_values'));

describe('readouts against a kept reference summary', () => {
  it.each([false, true])('give the readouts without it for each variant (causal %s)', (causal) => {
    const lab = av.lab(80, 16);
    lab.generate('clustered', 1.2, 9);
    expect(lab.reference({ causal }).status).toBe(0);
    for (const variant of ['elu', 'focused', 'performer', 'cosformer', 'relu']) {
      const knobs = { variant, causal };
      if (lab.matrix(knobs).status < 0) continue;
      const without = lab.readouts(knobs, { sv: null, reference: false, rows: true });
      const h1 = lab.rowEntropyHistogram(12);
      const withS = lab.readouts(knobs, { sv: null, reference: false, rows: true, summary: 'ref-1' });
      const h2 = lab.rowEntropyHistogram(12);
      expect(plain(withS)).toEqual(plain(without));
      expect(Array.from(h2.counts)).toEqual(Array.from(h1.counts));
      if (variant !== 'relu' && variant !== 'cosformer') expect(withS.row_kl_mean).not.toBe(null); // theirs has zeros where A > 0
      expect(withS.output_error_rel).not.toBe(null);
    }
    lab.free();
  });

  it('is reused while its key stays, and dropped by a new reference, new inputs or another mask', () => {
    const lab = av.lab(64, 8);
    lab.generate('gaussian', 1, 3);
    lab.reference({});
    lab.matrix({ variant: 'elu' });
    lab.readouts({ variant: 'elu' }, { sv: null, reference: false, summary: 'k' });
    const kept = lab.summaryKept;
    expect(kept).toMatchObject({ key: 'k', causal: 0 });
    lab.matrix({ variant: 'focused' });
    const r1 = lab.readouts({ variant: 'focused' }, { sv: null, reference: false, summary: 'k' });
    expect(lab.summaryKept).toBe(kept); // the same object: not made again
    // a new reference (another scale) under the same key: the lab's own write drops the summary
    lab.reference({ scale: 0.05 });
    const r2 = lab.readouts({ variant: 'focused', scale: 0.05 }, { sv: null, reference: false, summary: 'k' });
    expect(lab.summaryKept).not.toBe(kept);
    expect(plain(r2)).toEqual(plain(lab.readouts({ variant: 'focused', scale: 0.05 }, { sv: null, reference: false })));
    expect(r2.row_kl_mean).not.toBe(r1.row_kl_mean);
    // new inputs: dropped as well (V changed)
    const k2 = lab.summaryKept;
    lab.generate('gaussian', 1, 4);
    lab.reference({ scale: 0.05 });
    lab.matrix({ variant: 'focused', scale: 0.05 });
    const r3 = lab.readouts({ variant: 'focused', scale: 0.05 }, { sv: null, reference: false, summary: 'k' });
    expect(lab.summaryKept).not.toBe(k2);
    expect(plain(r3)).toEqual(plain(lab.readouts({ variant: 'focused', scale: 0.05 }, { sv: null, reference: false })));
    lab.free();
  });

  it('Engine.plainReadouts keeps one summary across a drag of the variant\'s knob', () => {
    const schema = buildSchema(av.registry), e = new Engine(av);
    const base = { ...schema.defaults(), n: 96, d: 16, variant: 'focused' };
    const first = e.plainReadouts(schema.requestOf({ ...base, p: 2 }));
    const kept = e.lab.summaryKept;
    expect(kept).not.toBe(null);
    const second = e.plainReadouts(schema.requestOf({ ...base, p: 4 }));
    expect(e.lab.summaryKept).toBe(kept);
    // and the readouts are those of a lab with no summary
    const lab = av.lab(96, 16, 16);
    lab.generate(base.gen, base.std, base.seed);
    const req = schema.requestOf({ ...base, p: 4 });
    lab.reference(req.knobs);
    lab.matrix(req.knobs);
    const own = lab.readouts(req.knobs, { sv: null, reference: false, tau: req.tau });
    for (const k of ['row_kl_mean', 'output_error_rel', 'error_fro_rel', 'row_entropy_mean', 'keys_for_90']) expect(second[k]).toBe(own[k]);
    expect(second.row_kl_mean).not.toBe(first.row_kl_mean);
    lab.free();
  });
});
