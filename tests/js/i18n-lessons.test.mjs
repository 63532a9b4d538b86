// i18n-lessons.test.mjs: the lessons in Chinese (docs/i18n.md; docs/lessons.md, "Citations"). Every lesson of
// web/state/presets.mjs has its Chinese title and caption, and its question, choices, explanation and
// compare label where it has them, with the English's placeholders and no key for a part it lacks; the
// panel's words() give them in zh and the presets' English in en; a seed citation shows the article's own
// title and the quoted sentence in both languages and the English gloss only in English; a paper keeps
// its English title with Chinese words around it; a Chinese cost line's verdict is quoted; the sweep's
// guides speak the page's language.
import { describe, it, expect } from 'vitest';
import { PRESETS } from '../../web/state/presets.mjs';
import { SEEDS, citeParts, shownQuote } from '../../web/state/citations.mjs';
import { CATALOGUES, placeholders, setLang } from '../../web/i18n/i18n.mjs';
import { words, fillPrediction } from '../../web/ui/lessons.mjs';
import { sweepGuides } from '../../web/render/sweep-guides.mjs';

const ZH = CATALOGUES.zh;
const CJK = /[\u3400-\u9fff]/;

/** A lesson's translatable parts, as words() names them, with their English. */
function partsOf(p) {
  const out = { title: p.title, caption: p.caption };
  if (p.predict) {
    out['predict.question'] = p.predict.question;
    p.predict.choices.forEach((c, i) => { out[`predict.choice.${i}`] = c; });
    out['predict.explanation'] = p.predict.explanation;
  }
  if (p.compare) out.compare = p.compare.label;
  return out;
}

describe('every lesson in Chinese', () => {
  it('has its title, caption, prompts and compare label in zh, with the English placeholders', () => {
    const bad = [];
    for (const p of PRESETS) {
      for (const [part, english] of Object.entries(partsOf(p))) {
        const zh = ZH[`preset.${p.name}.${part}`];
        if (typeof zh !== 'string' || !zh.trim()) { bad.push(`${p.name}.${part}: missing`); continue; }
        if (!CJK.test(zh) && /[A-Za-z]{2,}/.test(english)) bad.push(`${p.name}.${part}: no Chinese in "${zh}"`);
        if (placeholders(zh).join() !== placeholders(english).join()) bad.push(`${p.name}.${part}: placeholders differ`);
      }
    }
    expect(PRESETS.length).toBe(33);
    expect(bad).toEqual([]);
  });

  it('has no Chinese for a lesson or a part that does not exist (a renamed lesson is seen)', () => {
    const want = new Set(PRESETS.flatMap((p) => Object.keys(partsOf(p)).map((part) => `preset.${p.name}.${part}`)));
    expect(Object.keys(ZH).filter((k) => k.startsWith('preset.') && !want.has(k))).toEqual([]);
  });

  it('is what the panel writes: the catalogue in zh, presets.mjs in en', () => {
    const p = PRESETS.find((x) => x.name === 'window-rank');
    try {
      setLang('zh');
      expect(words(p, 'title')).toBe(ZH['preset.window-rank.title']);
      expect(words(p, 'predict.choice.1')).toBe(ZH['preset.window-rank.predict.choice.1']);
      expect(words(PRESETS.find((x) => x.name === 'dwc-rank'), 'compare')).toBe('无 DWC');
      setLang('en');
      expect(words(p, 'title')).toBe(p.title);
      expect(words(p, 'predict.explanation')).toBe(p.predict.explanation);
    } finally { setLang('en'); }
  });
});

describe('the citations in the articles\' own words', () => {
  const all = PRESETS.flatMap((p) => p.sources.map((c) => ({ lesson: p.name, c })));
  const text = (parts) => parts.map((x) => x.text).join('');

  it('a seed: its own title and the quote in both languages, the gloss only in English', () => {
    const seeds = all.filter(({ c }) => c.seed);
    expect(seeds.length).toBeGreaterThan(20);
    for (const { lesson, c } of seeds) {
      for (const lang of ['en', 'zh']) {
        const parts = citeParts(c, lang);
        expect(parts.find((x) => x.cls === 'cite-title')?.text, lesson).toBe(`《${SEEDS[c.seed].title}》`);
        expect(parts.find((x) => x.cls === 'cite-quote')?.text, lesson).toBe(`“${shownQuote(c)}”`);
        expect(parts.find((x) => x.cls === 'cite-quote').lang).toBe('zh');
        if (c.section) expect(parts.find((x) => x.cls === 'cite-section')?.text, lesson).toBe(c.section);
        if (c.author) expect(parts.find((x) => x.cls === 'cite-author')?.text, lesson).toBe(c.author);
      }
      const en = citeParts(c, 'en'), zh = citeParts(c, 'zh');
      expect(en.find((x) => x.cls === 'cite-gloss')?.text, lesson).toBe(c.gloss.replace(/\.$/, ''));
      expect(zh.some((x) => x.cls === 'cite-gloss' || x.title), lesson).toBe(false); // no English beside the source
      expect(text(zh).includes(c.gloss.replace(/\.$/, '')), lesson).toBe(false);
    }
  });

  it('a seed in zh reads as Chinese cites: author, 《title》, the section, then the quote', () => {
    const c = PRESETS.find((p) => p.name === 'taylor-order').sources[0];
    expect(text(citeParts(c, 'zh'))).toBe(`苏剑林《${SEEDS['003'].title}》“结果分析”一节：“${shownQuote(c)}”`);
    expect(text(citeParts(c, 'en'))).toBe(`《${SEEDS['003'].title}》 by 苏剑林, section “结果分析”: “${shownQuote(c)}” — ${c.gloss.replace(/\.$/, '')}`);
    expect(citeParts(c, 'zh').find((x) => x.cls === 'cite-title').href).toBe(SEEDS['003'].link);
  });

  it('a paper keeps its English title, with Chinese words around it in zh', () => {
    const c = PRESETS.find((p) => p.name === 'performer-norm').sources[0];
    expect(text(citeParts(c, 'zh'))).toBe('论文《Rethinking Attention with Performers》（Choromanski 等，2021），arXiv:2009.14794');
    expect(text(citeParts(c, 'en'))).toBe('Choromanski et al. 2021, “Rethinking Attention with Performers”, arXiv:2009.14794');
    // the English names are marked English in Chinese text (a screen reader's voice; the zh check skips them)
    expect(citeParts(c, 'zh').filter((x) => x.lang === 'en').map((x) => x.text)).toEqual(['Rethinking Attention with Performers', 'Choromanski', 'arXiv:2009.14794']);
    expect(citeParts(c, 'zh').find((x) => x.cls === 'cite-paper').href).toBe('https://arxiv.org/abs/2009.14794');
    for (const { lesson, c: p } of all.filter(({ c: x }) => x.paper)) {
      const zh = text(citeParts(p, 'zh'));
      expect(zh, lesson).toMatch(/^论文《/);
      expect(zh, lesson).toContain(p.paper);
      expect(zh, lesson).not.toMatch(/et al/);
    }
  });
});

describe('a prediction explained in Chinese', () => {
  it('quotes the cost line\'s verdict from its full-width parentheses too', () => {
    const cost = '开销（n = 256）：线性路径 1M 次乘加；softmax 的二次路径 4M 次乘加（线性路径的开销是 softmax 的 1/4）';
    expect(fillPrediction('开销一行显示：{cost}', { cost })).toBe('开销一行显示：线性路径的开销是 softmax 的 1/4');
    expect(fillPrediction('{cost}', { cost: 'cost at n = 256: … (linear is 4× cheaper)' })).toBe('linear is 4× cheaper');
  });
});

describe('the sweep\'s guides', () => {
  it('are labelled in the page\'s language', () => {
    const plan = { name: 's', readout: 'rank', values: [1, 8, 64] };
    try {
      setLang('zh');
      expect(sweepGuides(plan, [], 8).series.map((s) => s.label)).toEqual(['秩 = s']);
      expect(sweepGuides({ ...plan, readout: 'error_fro_rel' }, [], 8).hlines.map((h) => h.label)).toEqual(['误差 1（M = 0）']);
    } finally { setLang('en'); }
  });
});
