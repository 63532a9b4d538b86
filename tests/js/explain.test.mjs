// The explanations (web/state/explain.mjs): every variant of the real registry and every readout row has one,
// with a source where it is a variant, and every glossary symbol typesets as MathML (KaTeX, throwOnError).
import { describe, it, expect } from 'vitest';
import katex from 'katex';
import { loadAttnviz } from '../../web/wasm/attnviz.mjs';
import { VARIANT_EXPLAIN, GLOSSARY, CONCEPTS } from '../../web/state/explain.mjs';
import { PRESETS, presetOf } from '../../web/state/presets.mjs';
import { KNOB_VIEW, VARIANT_VIEW } from '../../web/state/variants.mjs';
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
  it('the glossary has an entry for every Greek letter and knob letter the lessons, labels and hints use', () => {
    const syms = GLOSSARY.map((g) => g.sym);
    const texts = [
      ...PRESETS.flatMap((p) => [[p.name, p.title], [p.name, p.caption], ...(p.predict ? [[p.name, p.predict.question], [p.name, p.predict.explanation], ...p.predict.choices.map((c) => [p.name, c])] : [])]),
      ...Object.entries(KNOB_VIEW).flatMap(([k, v]) => [[k, v.label], [k, v.toggle?.label ?? '']]),
      ...Object.entries(VARIANT_VIEW).flatMap(([k, v]) => [[k, v.label], [k, v.hint]]),
    ];
    const missing = [];
    for (const [where, t] of texts) for (const c of new Set(t.match(/[\u0370-\u03ff]/g) ?? [])) if (!syms.some((x) => x.includes(c))) missing.push(`${c} (${where})`);
    // a knob's own letter: the label's last word when it is one letter ("sliding window W", "chunk size C")
    for (const [k, v] of Object.entries(KNOB_VIEW)) { const m = v.label.match(/ (\p{L})$/u); if (m && !syms.some((x) => x.split(/[/, ]+/).includes(m[1]))) missing.push(`${m[1]} (knob ${k})`); }
    expect(missing).toEqual([]);
    // the symbols the lessons and the recurrent views name in words
    for (const x of ['γ', 'η', 'W', 'r', 'h', 'S', 'z', 'ω', 'E/F', 'landmarks', 'α']) expect(syms, x).toContain(x);
    expect(new Set(syms).size).toBe(syms.length);
  });
  it('every concept is defined and links at least one lesson; every glossary link names a lesson', () => {
    const terms = CONCEPTS.map((c) => c.term);
    for (const t of ['rank', 'numerical rank', 'semiseparable rank', 'row entropy', 'spiky', 'attention sink', 'kernel, feature map', 'state', 'causal mask', 'truncated SVD', 'KL divergence']) expect(terms, t).toContain(t);
    for (const c of CONCEPTS) {
      expect(c.text.length, c.term).toBeGreaterThan(40);
      expect(c.lessons.length, c.term).toBeGreaterThan(0);
    }
    for (const e of [...GLOSSARY, ...CONCEPTS]) for (const name of e.lessons ?? []) expect(presetOf(name), `${e.sym ?? e.term}: ${name}`).not.toBe(null);
  });
});
