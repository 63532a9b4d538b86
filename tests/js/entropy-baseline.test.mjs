// One baseline for row entropies, named the same everywhere (docs/readouts.md, row_entropy_uniform): the
// mean entropy of uniform rows, ln n, or ln(n!)/n under the causal mask, where row i has i + 1 keys. The
// readout row, the histogram's note, mark and exported SVG, and the overview's H all read the library's
// row_entropy_uniform; causal, ln n would be another number (5.58 against 4.59 at n = 265).
import { describe, it, expect } from 'vitest';
import { loadAttnviz } from '../../web/wasm/attnviz.mjs';
import { buildSchema } from '../../web/state/state.mjs';
import { Engine } from '../../web/compute/engine.mjs';
import { READOUT_ROWS, rowLabel } from '../../web/render/readouts.mjs';
import { entropyBars, entropyNote } from '../../web/render/entropy.mjs';
import { entropySvg } from '../../web/io/export.mjs';
import { fmt } from '../../web/render/format.mjs';

const av = await loadAttnviz({ source: new URL('../../build/wasm/attnviz.wasm', import.meta.url) });
const schema = buildSchema(av.registry);

function views(link) {
  const st = schema.fromHash(link).state;
  const req = schema.requestOf(st);
  const engine = new Engine(av);
  const r = engine.frame(req, { readouts: true }).readouts;
  const head = engine.headSummary(req);
  engine.free();
  return { n: st.n, r, head, hist: r.entropy_hist };
}

describe('the row-entropy baseline', () => {
  for (const link of ['variant=focused&n=265&d=16&causal=1', 'variant=elu&n=96&d=16', 'variant=softmax&n=265&d=16&causal=1&gen=local']) {
    it(`is the library's row_entropy_uniform in every view: ${link}`, () => {
      const { n, r, head, hist } = views(link);
      const base = r.row_entropy_uniform;
      const causal = link.includes('causal=1');
      let lnFact = 0;
      for (let i = 2; i <= n; i++) lnFact += Math.log(i);
      expect(base).toBeCloseTo(causal ? lnFact / n : Math.log(n), 12);
      const row = READOUT_ROWS.find((x) => x.id === 'row_entropy');
      expect(rowLabel(row, {})).toBe('row entropy / uniform');
      expect(row.text(r, {})).toBe(`${fmt(r.row_entropy_mean)} / ${fmt(base)}`);
      // the histogram: its axis runs to ln n (the most a row can have), its mark and note say the baseline
      expect(hist.top).toBeCloseTo(Math.log(n), 12);
      expect(hist.uniform).toBeCloseTo(base, 12);
      expect(entropyNote(hist)).toContain(`uniform ${fmt(base)}`);
      expect(entropyNote(hist)).not.toMatch(/ln n = [\d.]+ \(uniform rows\)/);
      const bars = entropyBars(hist);
      expect(bars.uniform).toBeCloseTo(base / hist.top, 12);
      expect(entropySvg(bars, { title: 't', caption: 'c' })).toContain(`uniform = ${fmt(base)}`);
      // the overview's H: the mean row entropy over the same baseline
      expect(head.values.row_entropy).toBeCloseTo(r.row_entropy_mean / base, 12);
    });
  }

  it('is one shared function', async () => {
    const { uniformEntropy, UNIFORM_NAME } = await import('../../web/compute/entropy-baseline.mjs');
    expect(UNIFORM_NAME).toBe('uniform');
    expect(uniformEntropy(4, false)).toBeCloseTo(Math.log(4), 15);
    expect(uniformEntropy(4, true)).toBeCloseTo(Math.log(24) / 4, 15);
    expect(uniformEntropy(1, true)).toBe(0);
  });
});
