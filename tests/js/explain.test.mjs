// The explanations (web/state/explain.mjs): every variant of the real registry and every readout row has one,
// with a source where it is a variant, and every glossary symbol typesets as MathML (KaTeX, throwOnError).
import { describe, it, expect } from 'vitest';
import katex from 'katex';
import { loadAttnviz } from '../../web/wasm/attnviz.mjs';
import { VARIANT_EXPLAIN, GLOSSARY } from '../../web/state/explain.mjs';
import { READOUT_ROWS } from '../../web/render/readouts.mjs';

const av = await loadAttnviz({ source: new URL('../../build/wasm/attnviz.wasm', import.meta.url) });

describe('explanations', () => {
  it('cover every variant of the registry, with two sentences or more and a source', () => {
    for (const v of av.registry.variants) {
      const x = VARIANT_EXPLAIN[v.name];
      expect(x, v.name).toBeDefined();
      expect(x.text.split(/(?<=\.)\s+/).length, v.name).toBeGreaterThanOrEqual(2);
      expect(x.source, v.name).toMatch(/et al\.|seed article/);
    }
    expect(Object.keys(VARIANT_EXPLAIN).sort()).toEqual(av.registry.variants.map((v) => v.name).sort());
  });
  it('cover every readout row, and say when a readout is undefined where it can be', () => {
    expect(READOUT_ROWS.length).toBeGreaterThan(10);
    for (const row of READOUT_ROWS) expect(row.explain?.split(/(?<=\.)\s+/).length, row.id).toBeGreaterThanOrEqual(1);
    for (const row of READOUT_ROWS) expect(row.explain.length, row.id).toBeGreaterThan(40);
    const explain = Object.fromEntries(READOUT_ROWS.map((r) => [r.id, r.explain]));
    for (const id of ['keys_for_90', 'row_entropy', 'row_kl_mean', 'effective_rank']) expect(explain[id], id).toMatch(/Undefined/);
  });
  it('the glossary names every knob symbol once, and each typesets', () => {
    const syms = GLOSSARY.map((g) => g.tex);
    expect(new Set(syms).size).toBe(syms.length);
    for (const s of ['n', 'd', String.raw`\beta`, 'p', 's', 'm', String.raw`\ell`, 'N', String.raw`\tau`]) expect(syms).toContain(s);
    for (const g of GLOSSARY) expect(() => katex.renderToString(g.tex, { throwOnError: true, output: 'mathml' }), g.tex).not.toThrow();
  });
});
