// presentation.test.mjs: the checklist of docs/adding-a-variant.md, walked over the registry (the real
// wasm module's av_registry_json). For every variant: its web/state/variants.mjs entry with every field the page
// needs (label, TeX, hint, explanation, numpy body, random matrices), its knobs' presentation, its section
// in docs/variant-formulas.md, its double reference in tests/c/check_attention.c; and every list of
// variants in the docs is the registry's (scripts/variant-lists.mjs). A fake registry row shows that each
// check can fail.
import { describe, it, expect } from 'vitest';
import { readFileSync } from 'node:fs';
import katex from 'katex';
import { loadAttnviz } from '../../web/wasm/attnviz.mjs';
import { VARIANT_VIEW, KNOB_VIEW } from '../../web/state/variants.mjs';
import { randomOf } from '../../web/compute/random-draws.mjs';
import { LIST_FILES, regenerate, listExprs } from '../../scripts/variant-lists.mjs';

const ROOT = new URL('../../', import.meta.url);
const read = (file) => readFileSync(new URL(file, ROOT), 'utf8');
const av = await loadAttnviz({ source: new URL('build/wasm/attnviz.wasm', ROOT) });
const RANDOM_KINDS = ['omega', 'E', 'F', 'dwc']; // web/wasm/lab.mjs randomMatrix, enum av_random_kind

/** The enum av_variant names by value (include/attnviz.h), AV_VARIANT_COUNT left out. */
function enumNames(header) {
  const body = /enum av_variant \{([^]*?)AV_VARIANT_COUNT/.exec(header)[1]; // its comments hold braces
  const out = [];
  for (const m of body.matchAll(/^\s*(AV_\w+) = (\d+),/gm)) out[Number(m[2])] = m[1];
  return out;
}

/** The names listed in a C array `static const int NAME[] = {...};`. */
const cArray = (src, name) => (new RegExp(`${name}\\[\\] = \\{([^}]*)\\}`).exec(src)?.[1] ?? '').match(/AV_\w+/g) ?? [];

const sentences = (t) => t.split(/(?<=\.)\s+/).filter(Boolean).length;

/**
 * What the checklist asks of each variant and is not there, as "name: what" lines ([] when complete).
 * @param {object} registry av.registry (or a fake)
 * @param {object} ctx view (VARIANT_VIEW), knobView (KNOB_VIEW), formulas (docs/variant-formulas.md),
 *   enums (enumNames of the header), refs (the C reference lists)
 */
function missingFor(registry, { view, knobView, formulas, enums, refs }) {
  const out = [];
  for (const [i, v] of registry.variants.entries()) {
    const say = (what) => out.push(`${v.name}: ${what}`);
    if (!new RegExp(`^## ${v.name}( — .*)?$`, 'm').test(formulas)) say('no section "## name — title" in docs/variant-formulas.md');
    const id = enums[i];
    if (!id) say('no value in enum av_variant (include/attnviz.h)');
    else if (!refs.includes(id)) say(`${id} in neither REF_VARIANTS nor REF_ELSEWHERE (tests/c/check_attention.c)`);
    for (const k of v.knobs) if (!Object.hasOwn(knobView, k)) say(`knob ${k} has no entry in KNOB_VIEW (web/state/variants.mjs)`);
    const e = Object.hasOwn(view, v.name) ? view[v.name] : null;
    if (!e) { say('no entry in VARIANT_VIEW (web/state/variants.mjs)'); continue; }
    for (const f of ['label', 'tex', 'hint']) if (typeof e[f] !== 'string' || !e[f].trim()) say(`entry has no ${f}`);
    if (typeof e.tex === 'string') {
      try { katex.renderToString(e.tex, { throwOnError: true, output: 'mathml' }); } catch { say('tex does not typeset (KaTeX)'); }
    }
    if (typeof e.explain?.text !== 'string' || sentences(e.explain.text) < 2) say('entry has no explain.text of two sentences or more');
    if (typeof e.explain?.source !== 'string' || !e.explain.source.trim()) say('entry has no explain.source');
    if (typeof e.numpy !== 'string' || !/(^|\n)R = /.test(e.numpy)) say('entry has no numpy body setting R');
    if (!Array.isArray(e.random)) { say('entry has no random list ([] when it draws none)'); continue; }
    for (const r of e.random) {
      if (!/^[A-Za-z_]\w*$/.test(r?.name ?? '') || !/^\w+$/.test(r?.what ?? '') || !RANDOM_KINDS.includes(r?.kind)) {
        say(`random ${JSON.stringify(r)} is not {name, what, kind} with kind one of ${RANDOM_KINDS.join(', ')}`);
      } else if (typeof e.numpy === 'string' && !new RegExp(`\\b${r.name}\\b`).test(e.numpy)) {
        say(`the numpy body never reads its random matrix ${r.name}`);
      }
    }
  }
  return out;
}

/** What the docs' generated lists and tables lack or misstate for this registry, as lines. */
function staleDocs(registry, texts) {
  const out = [];
  for (const [file, text] of Object.entries(texts)) {
    if (regenerate(text, registry) !== text) out.push(`${file}: a list of variants is not the registry's (node scripts/variant-lists.mjs)`);
    // a normaliser table names every rule the registry uses
    const rules = listExprs(text).filter((x) => x.startsWith('norm=')).map((x) => x.slice(5));
    if (!rules.length) continue;
    for (const r of new Set(registry.variants.map((v) => v.norm))) {
      if (!rules.includes(r)) out.push(`${file}: no row for the normaliser rule ${r}`);
    }
  }
  const formulas = texts['docs/variant-formulas.md'];
  for (const k of registry.knobs) {
    if (!formulas.includes(`| \`${k.key}\` |`)) out.push(`docs/variant-formulas.md: no row for the knob ${k.key}`);
  }
  return out;
}

const ctx = {
  view: VARIANT_VIEW, knobView: KNOB_VIEW, formulas: read('docs/variant-formulas.md'),
  enums: enumNames(read('include/attnviz.h')),
  refs: ['REF_VARIANTS', 'REF_ELSEWHERE'].flatMap((a) => cArray(read('tests/c/check_attention.c'), a)),
};
const texts = Object.fromEntries(LIST_FILES.map((f) => [f, read(f)]));

describe('every variant of the registry has everything the checklist asks', () => {
  it('its entry in web/state/variants.mjs, its docs section and its C reference', () => {
    expect(av.registry.variants.length).toBeGreaterThan(0);
    expect(ctx.refs.length).toBeGreaterThan(0);
    expect(missingFor(av.registry, ctx)).toEqual([]);
    expect(Object.keys(VARIANT_VIEW)).toEqual(av.registry.variants.map((v) => v.name)); // none left over, in order
  });

  it('its random matrices are the engine\'s (web/compute/random-draws.mjs), which the export reads', () => {
    for (const name of Object.keys(VARIANT_VIEW)) expect(VARIANT_VIEW[name].random, name).toEqual(randomOf(name));
    expect(Object.keys(VARIANT_VIEW).filter((name) => randomOf(name).length > 0)).toEqual(['linformer', 'performer']);
  });

  it('every list of variants in the docs is the registry\'s', () => {
    for (const f of LIST_FILES) expect(listExprs(texts[f]).length, f).toBeGreaterThan(0);
    expect(staleDocs(av.registry, texts)).toEqual([]);
  });
});

describe('the checks fail on a variant that lacks something (a fake registry row, never a real one)', () => {
  const real = av.registry.variants;
  // elu's row, renamed, without a causal form, scaled, with a rule and a knob nobody has: every list moves
  const fake = { ...real[1], name: 'fakevar', label: 'fake', causal: false, scaled: true, norm: 'fakerule', knobs: ['p', 'fakeknob'] };
  const reg = { ...av.registry, variants: [...real, fake] };

  it('names each missing piece of a new variant', () => {
    const got = missingFor(reg, ctx);
    expect(got).toEqual([
      'fakevar: no section "## name — title" in docs/variant-formulas.md',
      'fakevar: no value in enum av_variant (include/attnviz.h)',
      'fakevar: knob fakeknob has no entry in KNOB_VIEW (web/state/variants.mjs)',
      'fakevar: no entry in VARIANT_VIEW (web/state/variants.mjs)',
    ]);
  });

  it('names each missing field of an entry', () => {
    const rest = Object.fromEntries(Object.entries(VARIANT_VIEW.performer).filter(([k]) => !['numpy', 'explain', 'random'].includes(k)));
    const view = { ...VARIANT_VIEW, fakevar: { ...rest, tex: String.raw`\frac{1}{`, explain: { text: 'One sentence.' } } };
    const enums = [...ctx.enums, 'AV_FAKEVAR'];
    const got = missingFor(reg, { ...ctx, view, enums });
    expect(got).toEqual(expect.arrayContaining([
      'fakevar: AV_FAKEVAR in neither REF_VARIANTS nor REF_ELSEWHERE (tests/c/check_attention.c)',
      'fakevar: tex does not typeset (KaTeX)',
      'fakevar: entry has no explain.text of two sentences or more',
      'fakevar: entry has no explain.source',
      'fakevar: entry has no numpy body setting R',
      'fakevar: entry has no random list ([] when it draws none)',
    ]));
    const drawn = { ...view, fakevar: { ...VARIANT_VIEW.performer, random: [{ name: 'Z', what: 'Z', kind: 'omega' }, { name: 'Y', what: 'Y', kind: 'nope' }] } };
    expect(missingFor(reg, { ...ctx, view: drawn, enums })).toEqual(expect.arrayContaining([
      'fakevar: the numpy body never reads its random matrix Z',
      expect.stringMatching(/^fakevar: random \{"name":"Y".*kind one of omega, E, F, dwc$/),
    ]));
  });

  it('finds the docs\' lists and the normaliser tables stale', () => {
    const got = staleDocs(reg, texts);
    for (const f of LIST_FILES) expect(got, f).toContain(`${f}: a list of variants is not the registry's (node scripts/variant-lists.mjs)`);
    expect(got).toContain('docs/conventions.md: no row for the normaliser rule fakerule');
    expect(got).toContain('docs/variant-formulas.md: no row for the normaliser rule fakerule');
    const knobbed = { ...av.registry, knobs: [...av.registry.knobs, { key: 'fakeknob' }] };
    expect(staleDocs(knobbed, texts)).toEqual(['docs/variant-formulas.md: no row for the knob fakeknob']);
  });
});
