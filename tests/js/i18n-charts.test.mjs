// i18n-charts.test.mjs: the charts' words in both languages (docs/i18n.md; web/i18n/*/charts.mjs). Every key
// the charts' code asks t() for is in both catalogues (read from the sources, so a string added in code
// without its words fails here); the cost line, the entropy note, the spectrum's route names and the
// exported figures' captions and titles are Chinese in Chinese, with the numbers written as in English;
// a Chinese caption wraps between characters and names a CJK font.
import { describe, it, expect, afterEach } from 'vitest';
import { readFileSync } from 'node:fs';
import { CATALOGUES, setLang } from '../../web/i18n/i18n.mjs';
import { costLine } from '../../web/render/readouts.mjs';
import { entropyNote } from '../../web/render/entropy.mjs';
import { routeName } from '../../web/render/spectrum.mjs';
import { wrapRuns, textUnits, CANVAS_FAMILY, SVG_FAMILY } from '../../web/render/svg-text.mjs';
import { figureCaption, chartSvg, entropySvg } from '../../web/io/export.mjs';

const ROOT = new URL('../../', import.meta.url);
const { en: EN, zh: ZH } = CATALOGUES;
const CJK = /[\u3400-\u9fff]/;
/** English words of three letters or more (symbols such as QKᵀ, ln, σ₁ and units aside). */
const ENGLISH = /\b(?!(?:exp|std|log|nats|iid|MiB|KiB|GiB|Inf|NaN|float32|softmax|SVD|DWC|FLatten|Performer|FAVOR|Taylor)\b)[A-Za-z]{3,}\b/;

afterEach(() => setLang('en'));

/** The charts' sources (the files of this area, and the cost line's function). */
const SOURCES = ['web/render/charts.mjs', 'web/render/variant-name.mjs', 'web/render/entropy.mjs', 'web/render/spectrum.mjs', 'web/render/rowbars.mjs',
  'web/render/readouts.mjs', 'web/ui/heatmaps.mjs', 'web/ui/spectra.mjs', 'web/ui/entropy-panel.mjs', 'web/ui/article-figures.mjs',
  'web/ui/row-view.mjs', 'web/ui/zoom.mjs', 'web/ui/export-menu.mjs', 'web/io/export.mjs'];
const source = (f) => readFileSync(new URL(f, ROOT), 'utf8');
const PREFIX = /^(chart|heatmap|hover|cost|export|row|figure)\./;

/** The keys a source asks for: t('key'), and t(`prefix.${x}`) expanded over the values `x` can take. */
function keysAsked(text) {
  const fixed = [...text.matchAll(/\bt\(\s*'([\w.]+)'/g)].map((m) => m[1]);
  // a ternary between two keys: t(cond ? 'a' : 'b')
  for (const m of text.matchAll(/\bt\([^()'`]*\?\s*'([\w.]+)'\s*:\s*'([\w.]+)'/g)) fixed.push(m[1], m[2]);
  const templated = [...text.matchAll(/\bt\(\s*`([\w.]+)\$\{/g)].map((m) => m[1]);
  return { fixed, templated };
}

/** What each templated key's `${…}` takes (a new one fails the test until it is listed here). */
const EXPANSIONS = {
  'option.ds.': ['mean', 'max'],
  'heatmap.every.': ['2', '3'],
  'chart.series.': ['M'],
  'chart.route.': ['accurate', 'fast'],
  'row.lane.': ['M', 'A'],
  'export.fig.': ['M', 'A', 'D', 'trio', 'spectrum', 'error', 'entropy', 'sweep'],
  'export.item.': ['npy', 'csv', 'json', 'zip'],
  'export.gen.': Object.keys(EN).filter((k) => k.startsWith('option.gen.')).map((k) => k.slice('option.gen.'.length)),
  'heatmap.zoom.': ['r0', 'r1', 'c0', 'c1'],
  'explain.mark.': ['lower', 'upper'], // the readout table's bound marks (the explain part's keys)
};

describe('the charts\' catalogue', () => {
  it('has, in both languages, every key the charts\' code asks for', () => {
    const missing = [], unknown = [];
    let count = 0;
    for (const f of SOURCES) {
      const { fixed, templated } = keysAsked(source(f));
      const keys = [...fixed];
      for (const p of templated) {
        if (!EXPANSIONS[p]) { unknown.push(`${f}: t(\`${p}\${…}\`)`); continue; }
        keys.push(...EXPANSIONS[p].map((x) => p + x));
      }
      for (const k of keys) {
        count++;
        for (const [lang, cat] of [['en', EN], ['zh', ZH]]) if (!Object.hasOwn(cat, k)) missing.push(`${f}: ${k} (${lang})`);
      }
    }
    expect(count).toBeGreaterThan(100);
    expect(unknown).toEqual([]);
    expect(missing).toEqual([]);
  });

  it('keeps the charts\' keys under the charts\' prefixes, and every one of them is used', () => {
    const all = SOURCES.map(source).join('\n'), html = source('web/index.html');
    const own = Object.keys(EN).filter((k) => PREFIX.test(k));
    expect(own.length).toBeGreaterThan(100);
    const unused = own.filter((k) => !all.includes(`'${k}'`) && !html.includes(`="${k}"`) && !Object.keys(EXPANSIONS).some((p) => k.startsWith(p) && all.includes(`\`${p}\${`)));
    expect(unused).toEqual([]);
  });

  it('says every chart string in Chinese words, where English has words', () => {
    const english = Object.keys(EN).filter((k) => PREFIX.test(k) && ENGLISH.test(EN[k].replace(/\{\w+\}/g, '')) && !CJK.test(ZH[k] ?? ''));
    expect(english).toEqual([]);
  });
});

describe('the cost line', () => {
  const cost = { linear_madds: 1.5e6, linear_bytes: 3 * 2 ** 20 }, softmax = { quad_madds: 4.2e7, quad_bytes: 8.5 * 2 ** 20 };
  const numbers = (s) => s.match(/\d[\d.,]*/g);

  it('says every word in the page\'s language, the numbers as English writes them', () => {
    setLang('en');
    const en = costLine(cost, 256, { softmax, label: 'FLatten' });
    expect(en).toBe('cost at n = 256: linear path of FLatten: 1.5M multiply-adds, 3 MiB; softmax\'s quadratic path: 42M multiply-adds, 8.5 MiB (linear is 28× cheaper)');
    setLang('zh');
    const zh = costLine(cost, 256, { softmax, label: 'FLatten' });
    expect(zh).toBe('n = 256 时的开销：FLatten 的线性路径：1.5M 次乘加，3 MiB；softmax 的二次路径：42M 次乘加，8.5 MiB（线性路径的开销是 softmax 的 1/28）');
    expect(numbers(zh.replace('1/28', '28'))).toEqual(numbers(en)); // a fraction: Chinese says 1/28 of the cost
    expect(zh).not.toMatch(ENGLISH);
  });

  it('has one meaning in both languages: dearer, the same, no linear path, uncounted, nothing yet', () => {
    for (const lang of ['en', 'zh']) {
      setLang(lang);
      const lines = [
        costLine({ linear_madds: 9e7, linear_bytes: 1 }, 64, { softmax, label: 'Performer' }),
        costLine({ linear_madds: 4.2e7, linear_bytes: 1 }, 64, { softmax, label: 'Performer' }),
        costLine({ linear_madds: null }, 64, { softmax, label: 'softmax' }),
        costLine({ linear_madds: null }, 64, { softmax, label: 'Taylor', featureDim: 4160 }),
        costLine(null, 64),
      ];
      const words = lang === 'en'
        ? [/linear is 2\.1× dearer\)$/, /\(about the same cost\)$/, /no linear path for softmax$/, /feature dimension 4\.16k is above the count's limit and above n/, /^cost: —$/]
        : [/（线性路径的开销是 softmax 的 2\.1 倍）$/, /（开销大致相同）$/, /softmax 没有线性路径$/, /特征维度 4\.16k 超出了计数的上限，也大于 n/, /^开销：—$/];
      lines.forEach((l, i) => expect(l, lang).toMatch(words[i]));
      if (lang === 'zh') for (const l of lines) expect(l).not.toMatch(ENGLISH);
    }
  });
});

describe('the charts\' notes', () => {
  const hist = { bins: 8, top: Math.log(64), uniform: 3.1, M: { counts: [1, 2], mean: 2.5, left: 3 }, A: { counts: [2, 1], mean: 1.25 } };

  it('the entropy note is Chinese in Chinese, with the same numbers', () => {
    setLang('en');
    const en = entropyNote(hist);
    expect(en).toMatch(/^mean: M 2\.5 \(solid\), softmax 1\.25 \(dashed\) · uniform 3\.1 \(dotted/);
    setLang('zh');
    const zh = entropyNote(hist);
    expect(zh).toBe('均值：M 2.5（实线），softmax 1.25（虚线） · 均匀 3.1（点线：均匀行的平均熵；横轴到 ln n = 4.16） · M 有 3 行未计入（有负的元素或行和为零）');
    expect(zh).not.toMatch(ENGLISH);
  });

  it('names the spectrum\'s routes in the page\'s language, and leaves an unknown one as it is', () => {
    setLang('zh');
    expect(['accurate', 'fast', 'factors (r = 16)', 'top 64 (randomized)', 'lanczos'].map(routeName))
      .toEqual(['精确路径（accurate）', '快速路径（fast）', '由因子计算（r = 16）', '前 64 个（随机化迭代）', 'lanczos']);
    setLang('en');
    expect(routeName('top 64 (randomized)')).toBe('top 64 (randomized)');
  });
});

describe('exported figures in Chinese', () => {
  const request = { inputs: { gen: 'clustered', seed: 1, n: 128, d: 16, std: 1 }, knobs: { variant: 'performer', causal: 1, scale: 0.25, m: 64, orthogonal: 0, seed: 0 } };

  it('the caption is the page\'s language, English when asked (the .zip\'s README), the numbers alike', () => {
    setLang('zh');
    const zh = figureCaption(request, 'Performer FAVOR+（随机特征）');
    expect(zh).toBe('Performer FAVOR+（随机特征）（m = 64，独立同分布（iid），特征随机种子 0） · 聚簇，种子 1，n = 128，d = 16，标准差 1，缩放 1/√d，因果');
    expect(figureCaption(request, 'Performer FAVOR+', null, 'en')).toBe('Performer FAVOR+ (m = 64, iid, feature seed 0) · clustered seed 1, n = 128, d = 16, std 1, scale 1/√d, causal');
  });

  it('a Chinese caption wraps between characters, each line within its width, and the lines are the caption', () => {
    const text = '变体 M 的注意力矩阵在 n = 1,024 时显示为 256×256 的块平均，每块 4×4，取块平均；松开后给出完整矩阵和读数';
    const lines = wrapRuns(text, 30);
    expect(lines.length).toBeGreaterThan(2);
    expect(lines.join('')).toBe(text);
    for (const l of lines) expect(textUnits(l.trimEnd())).toBeLessThanOrEqual(30);
    expect(lines.slice(1).some((l) => /^[\u3400-\u9fff]/.test(l))).toBe(true); // broken between characters, not only at spaces
    expect(lines.some((l) => /^[，。；：）]/.test(l))).toBe(false); // never a line starting with closing punctuation
  });

  it('an exported chart and histogram hold their Chinese words and name a CJK font', () => {
    setLang('zh');
    const svg = chartSvg({ title: '奇异值 σᵢ/σ₁', caption: '聚簇，种子 1', xLabel: 'i', yLabel: 'σᵢ/σ₁（对数）', logY: true,
      series: [{ label: '变体 M', color: '#000', x: [1, 2, 3], y: [1, 0.1, 0.01] }] });
    expect(svg).toContain(`font-family="${SVG_FAMILY}"`);
    expect(SVG_FAMILY).toMatch(/WenQuanYi Micro Hei/);
    expect(CANVAS_FAMILY).toMatch(/WenQuanYi Micro Hei.*sans-serif$/);
    expect(svg).toContain('奇异值 σᵢ/σ₁');
    const hist = entropySvg({ bins: 2, top: 4, M: [0.5, 0.5], A: null, max: 0.5, meanM: 0.5, meanA: null, uniform: 0.7, uniformValue: 2.8 }, { title: '行熵', caption: '聚簇' });
    expect(hist).toContain('行的占比');
    expect(hist).toContain('行熵 H（nats），横轴到 ln n = 4');
    expect(hist).toContain('均匀 = 2.8');
  });
});

describe('the variant and the reference as the figures name them', () => {
  it('a variant by its Chinese name, softmax A by its Chinese caption, in zh; as given in English or when unknown', async () => {
    const { variantName, referenceName } = await import('../../web/render/variant-name.mjs');
    const { VARIANT_VIEW } = await import('../../web/state/variants.mjs');
    const { referenceCaption } = await import('../../web/state/reference-text.mjs');
    setLang('zh');
    for (const [name, v] of Object.entries(VARIANT_VIEW)) expect(variantName(v.label), name).toBe(ZH[`variant.${name}`]);
    expect(variantName('带窗口 W = 8 的 softmax')).toBe('带窗口 W = 8 的 softmax'); // already the page's words
    expect(referenceName(referenceCaption({}))).toBe(ZH['heatmap.capA']);
    expect(referenceName(referenceCaption({ decay: 0.9, window: 0 }))).toBe(ZH['heatmap.capA.bare']);
    setLang('en');
    expect(variantName('focused (FLatten)')).toBe('focused (FLatten)');
    expect(referenceName(referenceCaption({ decay: 0.9 }))).toBe(referenceCaption({ decay: 0.9 }));
  });
});
