// The page's notation (web/state/variants.mjs, docs/variant-formulas.md "Notation on the page"): the logit
// scale β, Linformer's s, FLatten's p and the Taylor order ℓ never share a letter in the formulas and
// labels the page shows, and every formula typesets (KaTeX, throwOnError) without \mathbf or \mathbb,
// which MathML Core draws as plain letters.
import { describe, it, expect } from 'vitest';
import katex from 'katex';
import { VARIANT_VIEW, KNOB_VIEW } from '../../web/state/variants.mjs';
import { READOUT_ROWS } from '../../web/render/readouts.mjs';
import { loadAttnviz } from '../../web/wasm/attnviz.mjs';

await loadAttnviz({ source: new URL('../../build/wasm/attnviz.wasm', import.meta.url) }); // READOUT_ROWS come from its registry

const tex = (v) => VARIANT_VIEW[v].tex;

describe('notation', () => {
  it('β is the logit scale, s only Linformer\'s length, p only FLatten\'s power, ℓ the Taylor order', () => {
    for (const v of ['softmax', 'linformer', 'taylor', 'explimit']) expect(tex(v), v).toMatch(/\\beta/);
    for (const v of Object.keys(VARIANT_VIEW)) expect(tex(v), v).not.toMatch(/(^|[^a-z\\])s\\,/); // no "s\," scale factor
    expect(tex('taylor')).toMatch(/\\ell/);
    expect(tex('taylor')).not.toMatch(/(^|[^a-z\\])p([^a-z]|$)/);
    expect(tex('focused')).toMatch(/p/);
    expect(KNOB_VIEW.scale.label).toMatch(/β/);
    expect(KNOB_VIEW.order.label).toMatch(/ℓ/);
    expect(KNOB_VIEW.p.label).toMatch(/ p$/);
    expect(KNOB_VIEW.s.label).toMatch(/ s$/);
  });

  it('every formula the page shows typesets as MathML, with no \\mathbf or \\mathbb', () => {
    const all = [...Object.values(VARIANT_VIEW).map((v) => v.tex), ...READOUT_ROWS.map((r) => r.tex)];
    for (const t of all) {
      expect(() => katex.renderToString(t, { throwOnError: true, output: 'mathml' }), t).not.toThrow();
      expect(t).not.toMatch(/\\math(bf|bb)/);
    }
  });
});
