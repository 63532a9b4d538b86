// i18n.test.mjs: the catalogues (web/i18n/, docs/i18n.md). Every key in both languages, no empty string,
// a Chinese string that has Latin words has Chinese words too (proper names excepted, by a short list),
// the same placeholders in both; every control of the schema, every variant and every readout of the real
// registry has its words; the page's static words are the catalogue's; lang= is a link key the snapshot
// leaves out.
import { describe, it, expect } from 'vitest';
import { readFileSync } from 'node:fs';
import { loadAttnviz } from '../../web/wasm/attnviz.mjs';
import { buildSchema } from '../../web/state/state.mjs';
import { CATALOGUES, LANGS, t, tOwn, placeholders, setLang } from '../../web/i18n/i18n.mjs';
import { CHAPTERS } from '../../web/state/presets.mjs';
import { READOUT_ROWS } from '../../web/render/readouts.mjs';
import { fmtWhole } from '../../web/render/format.mjs';
import { combine } from '../../web/i18n/combine.mjs';

const ROOT = new URL('../../', import.meta.url);
const av = await loadAttnviz({ source: new URL('build/wasm/attnviz.wasm', ROOT) });
const schema = buildSchema(av.registry);
const { en: EN, zh: ZH } = CATALOGUES;

/** Keys whose English lives in data, not the catalogue (the registry's readouts; variants.mjs, presets.mjs, explain.mjs): zh only. */
const OWN_ENGLISH = /^(readout|variant|preset|glossary|concept)\./;
/** Chinese strings that are rightly without a Chinese character: a proper name, or the other language's name. */
const NO_CJK = new Set(['header.lang', 'variant.hedgehog']);
const CJK = /[\u3400-\u9fff]/;
/** Latin words of two letters or more, placeholders and code-like tokens (φ = elu+1, .npy) aside. */
const latinWords = (s) => s.replace(/\{\w+\}/g, '').match(/(?<![.\w])[A-Za-z]{2,}/g) ?? [];

/** What is wrong with a pair of catalogues, as sentences (empty: nothing). */
export function catalogueProblems(en, zh) {
  const out = [];
  for (const k of Object.keys(en)) if (!Object.hasOwn(zh, k)) out.push(`${k}: missing in zh`);
  for (const k of Object.keys(zh)) if (!Object.hasOwn(en, k) && !OWN_ENGLISH.test(k)) out.push(`${k}: missing in en`);
  for (const [lang, cat] of [['en', en], ['zh', zh]]) {
    for (const [k, s] of Object.entries(cat)) if (typeof s !== 'string' || !s.trim()) out.push(`${k}: empty in ${lang}`);
  }
  for (const [k, s] of Object.entries(zh)) {
    if (typeof s === 'string' && latinWords(s).length && !CJK.test(s) && !NO_CJK.has(k)) out.push(`${k}: no Chinese in "${s}"`);
    if (Object.hasOwn(en, k) && placeholders(en[k]).join() !== placeholders(s).join()) out.push(`${k}: placeholders differ`);
  }
  return out;
}

describe('the catalogues', () => {
  it('are composed from their parts, and a key two parts give is an error, not an override', () => {
    expect(combine({ a: { x: '1' }, b: { y: '2' } })).toEqual({ x: '1', y: '2' });
    expect(() => combine({ a: { x: '1' }, b: { x: '2' } })).toThrow(/x is given twice \(again in part b\)/);
  });

  it('finds a missing key, an empty string, English left in Chinese and a lost placeholder', () => {
    expect(catalogueProblems(
      { a: 'one', b: 'n = {n}', c: 'copy link', d: 'x' },
      { a: '一', b: 'n = {m}', c: 'copy link', d: '', 'readout.r': '秩', e: '多余' },
    )).toEqual(['e: missing in en', 'd: empty in zh', 'b: placeholders differ', 'c: no Chinese in "copy link"']);
  });

  it('have every key in both languages, no empty string, Chinese words and the same placeholders', () => {
    expect(LANGS).toEqual(['en', 'zh']);
    expect(catalogueProblems(EN, ZH)).toEqual([]);
  });

  it('give every control of the schema its label, and every option the page words, in both languages', () => {
    const missing = [];
    for (const e of schema.SCHEMA) {
      for (const lang of LANGS) if (!Object.hasOwn(CATALOGUES[lang], `control.${e.name}`)) missing.push(`${lang} control.${e.name}`);
      expect(e.label, e.name).toBe(EN[`control.${e.name}`]); // the schema's English is the catalogue's
    }
    // every picker's options, but the variants' (their own names, below) and the colour maps' (proper names)
    const pickers = schema.SCHEMA.filter((e) => e.type === 'enum' && ['input', 'variant', 'readout'].includes(e.group) && !['variant', 'cmap'].includes(e.name));
    expect(pickers.map((e) => e.name)).toEqual(expect.arrayContaining(['src', 'gen', 'ef_kind', 'ds']));
    for (const e of pickers) for (const o of e.options) for (const lang of LANGS) if (!CATALOGUES[lang][`option.${e.name}.${o}`]) missing.push(`${lang} option.${e.name}.${o}`);
    expect(missing).toEqual([]);
  });

  it('name every variant and every readout of the registry in Chinese', () => {
    const missing = [
      ...av.registry.variants.filter((v) => !ZH[`variant.${v.name}`]).map((v) => `variant.${v.name}`),
      ...av.registry.readouts.filter((r) => !ZH[`readout.${r.key}`]).map((r) => `readout.${r.key}`),
      ...READOUT_ROWS.filter((r) => !ZH[`readout.${r.id}`]).map((r) => `readout.${r.id}`),
    ];
    expect(READOUT_ROWS.length).toBeGreaterThan(5);
    expect(missing).toEqual([]);
  });

  it('name the nine chapters as web/state/presets.mjs does, in both languages', () => {
    expect(CHAPTERS.length).toBe(9);
    CHAPTERS.forEach((c, i) => { expect(EN[`chapter.${i + 1}`]).toBe(c.title); expect(ZH[`chapter.${i + 1}`]).toMatch(CJK); });
  });

  it('hold the page\'s own words: every data-i18n key of index.html, its English as the catalogue has it', () => {
    const html = readFileSync(new URL('web/index.html', ROOT), 'utf8');
    const keys = [...html.matchAll(/data-i18n(?:-title|-aria-label)?="([^"]+)"/g)].map((m) => m[1]);
    expect(keys.length).toBeGreaterThan(20);
    expect(keys.filter((k) => !Object.hasOwn(EN, k) || !Object.hasOwn(ZH, k))).toEqual([]);
    for (const m of html.matchAll(/data-i18n="([^"]+)"[^>]*>([^<]*)</g)) expect(m[2], m[1]).toBe(EN[m[1]]);
  });
});

describe('the notices of a worker failure', () => {
  it('name every worker the page makes, in both languages (notices are said by their templates: docs/i18n.md)', () => {
    const src = readFileSync(new URL('web/lab-workers.mjs', ROOT), 'utf8');
    const names = [...src.matchAll(/make(?:Worker|Aside)\('(\w+)'/g)].map((m) => m[1]);
    expect(names.sort()).toEqual(['background', 'frame', 'mechanisms', 'spectrum']);
    for (const name of names) for (const lang of LANGS) expect(CATALOGUES[lang][`notice.x.worker.${name}`], `${lang} notice.x.worker.${name}`).toBeTruthy();
  });
});

describe('t()', () => {
  it('fills placeholders, and shows a missing key as the key, never another language\'s words', () => {
    expect(t('status.took', { n: 256, ms: '3.2 ms' }, 'en')).toBe('n = 256: matrices 3.2 ms');
    expect(t('status.took', { n: 256, ms: '3.2 ms' }, 'zh')).toBe('n = 256：矩阵 3.2 ms');
    expect(t('no.such.key', null, 'zh')).toBe('no.such.key');
    expect(t('readout.rank', null, 'en')).toBe('readout.rank'); // zh only: the English is the registry's
    expect(tOwn('readout.rank', 'numerical rank', null, 'en')).toBe('numerical rank');
    expect(tOwn('readout.rank', 'numerical rank', null, 'zh')).toBe('数值秩');
  });

  it('writes numbers the same in both languages, as the articles do (digits, comma thousands)', () => {
    // format.mjs stays language-free because zh-CN writes whole numbers exactly as English does
    for (const x of [0, 7, 12480, 1234567, -4096]) expect(fmtWhole(x)).toBe(new Intl.NumberFormat('zh-CN').format(x));
  });
});

describe('the notes under the variant', () => {
  it('are said in the page\'s language, the variant by its name there', () => {
    const st = { ...schema.defaults(), variant: 'efficient', causal: true };
    const decayed = { ...schema.defaults(), variant: 'softmax', causal: true, decay: 0.9 };
    try {
      setLang('en');
      expect(schema.causalNote(st)).toBe('Efficient Attention has no causal form: shown non-causal');
      expect(schema.formNote(decayed)).toMatch(/^decay γ = 0\.9: a key's weight halves every 6\.58 tokens; the forgetting softmax/);
      setLang('zh');
      expect(schema.causalNote(st)).toBe('Efficient Attention（高效注意力） 没有因果形式：按非因果显示');
      expect(schema.formNote(decayed)).toMatch(/^衰减 γ = 0\.9：一个键的权重每 6\.58 个 token 减半；遗忘 softmax/);
    } finally { setLang('en'); }
  });
});

describe('the variant picker', () => {
  it('names a softmax with a decay or a window as such in both languages, never as the reference', () => {
    const st = { ...schema.defaults(), variant: 'softmax', causal: true, decay: 0.9, window: 8 };
    const option = schema.entryOf('variant');
    try {
      setLang('en');
      expect(option.optionLabelOf('softmax', st)).toBe('softmax, window W = 8, decay γ = 0.9');
      setLang('zh');
      expect(option.optionLabelOf('softmax', st)).toBe('带窗口 W = 8，衰减 γ = 0.9 的 softmax');
    } finally { setLang('en'); }
  });
});

describe('lang= in the link', () => {
  it('is English by default and left out of the link then; zh is written, and read back', () => {
    const st = schema.defaults();
    expect(st.lang).toBe('en');
    expect(schema.toHash(st)).not.toMatch(/lang=/);
    const zh = { ...st, lang: 'zh' };
    expect(schema.toHash(zh)).toMatch(/&lang=zh(&|$)/);
    expect(schema.fromHash(schema.toHash(zh)).state.lang).toBe('zh');
    expect(schema.fromHash('v=1&lang=fr').problems.join()).toMatch(/lang: "fr" is not one of en, zh/);
  });

  it('never changes the snapshot\'s state (the complete link)', () => {
    const st = schema.defaults();
    expect(schema.toHash({ ...st, lang: 'zh' }, { complete: true })).toBe(schema.toHash(st, { complete: true }));
    expect(schema.firstDirtyStage(['lang'])).toBe('display');
  });
});
