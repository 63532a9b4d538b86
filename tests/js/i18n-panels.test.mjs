// i18n-panels.test.mjs: the panels' words in both languages (docs/i18n.md): every catalogue key the panels'
// code names is in en and zh; the data the panels show by id (the recall view's memories, the overview's
// metrics, the sweep's readouts) has its words; the overview's pure text (a tile's sentence, the tokens, the
// reasons) is Chinese in Chinese and unchanged in English.
import { describe, it, expect, afterEach } from 'vitest';
import { readFileSync } from 'node:fs';
import { CATALOGUES, setLang } from '../../web/i18n/i18n.mjs';
import { MEMORIES } from '../../web/ui/mechanisms.mjs';
import { OVERVIEW_METRICS, cellLabel, tokensText, cellValue, metricOf, reasonText, overviewSvg, overviewScale } from '../../web/render/overview.mjs';
import { sweepReadouts } from '../../web/wasm/readout-info.mjs';
import { loadAttnviz } from '../../web/wasm/attnviz.mjs';
import { colorTable } from '../../web/render/colormap.mjs';

const { en: EN, zh: ZH } = CATALOGUES;
const CJK = /[\u3400-\u9fff]/;
const ROOT = new URL('../../', import.meta.url);
const av = await loadAttnviz({ source: new URL('build/wasm/attnviz.wasm', ROOT) });
const PANELS = ['web/ui/mechanisms.mjs', 'web/ui/sweep-panel.mjs', 'web/ui/overview.mjs', 'web/ui/model-panel.mjs', 'web/render/overview.mjs'];

afterEach(() => setLang('en'));

describe('the panels\' catalogue keys', () => {
  it('every key the panels\' code names literally (t(\'…\'), tr(\'…\'), K(\'…\'), say/status(\'…\')) is in both catalogues', () => {
    const missing = [];
    let count = 0;
    for (const file of PANELS) {
      const src = readFileSync(new URL(file, ROOT), 'utf8');
      for (const [, key] of src.matchAll(/\b(?:t|tr|K|say\('\w+',|status)\(\s*'((?:mech|sweep|overview|model|own)\.[\w.]+)'/g)) {
        count++;
        for (const [lang, cat] of [['en', EN], ['zh', ZH]]) if (!Object.hasOwn(cat, key)) missing.push(`${file}: ${key} (${lang})`);
      }
      // a key picked by a ternary: t(x ? 'a' : 'b')
      for (const [, key] of src.matchAll(/\?\s*'((?:mech|sweep|overview|model|own)\.[\w.]+)'\s*:\s*'/g)) if (!Object.hasOwn(ZH, key)) missing.push(`${file}: ${key} (zh)`);
    }
    expect(count).toBeGreaterThan(100);
    expect(missing).toEqual([]);
  });

  it('the keys built from names: the views\' tabs, the paths, the memories, the overview\'s units and outcomes', () => {
    const keys = [
      ...['stepper', 'scaling', 'recall', 'distill'].map((v) => `mech.tab.${v}`),
      ...['quadratic', 'linear', 'chunkwise'].flatMap((p) => [`mech.path.${p}`, `mech.scale.series.${p}`]),
      ...['state', 'z', 'phi', 'v', 'o', 'row'].map((x) => `mech.step.${x}.aria`),
      ...Object.keys(MEMORIES).map((id) => `mech.memory.${id}`),
      ...OVERVIEW_METRICS.map((m) => `overview.units.${m.key}`),
      ...['', 'On', 'Without', 'OnWithout'].map((s) => `overview.done${s}`),
    ];
    expect(keys.filter((k) => !Object.hasOwn(EN, k) || !Object.hasOwn(ZH, k))).toEqual([]);
    expect(keys.filter((k) => !CJK.test(ZH[k]))).toEqual([]);
  });

  it('the overview\'s metrics: their English units are the data\'s, their names the readouts\' (zh readout.KEY)', () => {
    for (const m of OVERVIEW_METRICS) {
      expect(EN[`overview.units.${m.key}`], m.key).toBe(m.units);
      expect(ZH[`readout.${m.key}`], m.key).toMatch(CJK);
    }
  });

  it('every readout the sweep can plot has its Chinese name', () => {
    const keys = sweepReadouts(av.registry.readouts); // the sweep picker's (compute/sweep.mjs SWEEP_READOUTS)
    expect(keys.length).toBeGreaterThan(5);
    expect(keys.filter((k) => !ZH[`readout.${k}`])).toEqual([]);
  });
});

describe('the overview\'s words', () => {
  const metric = metricOf('error_fro_rel');
  const rows = [
    { layer: 0, head: 1, ...cellValue({ values: { error_fro_rel: 0.25 } }, 'error_fro_rel') },
    { layer: 1, head: 0, ...cellValue(undefined, 'error_fro_rel') },
    { layer: 1, head: 1, ...cellValue({ values: { error_fro_rel: null }, reasons: { error_fro_rel: 'M has a zero row' } }, 'error_fro_rel') },
  ];

  it('English as before: a tile\'s sentence, the tokens, the reasons', () => {
    expect(cellLabel(rows[0], metric, { current: true, text: '“a b” (3 tokens)' })).toBe('layer 0, head 1: error vs softmax 0.250; on “a b” (3 tokens) (shown)');
    expect(cellLabel(rows[1], metric)).toBe('layer 1, head 0: error vs softmax undefined: not computed yet');
    expect(tokensText(['<s>', 'Once', ' upon'])).toBe('“Once upon” (3 tokens)');
  });

  it('Chinese in Chinese, the reasons the snapshot carries still English data, the library\'s as given', () => {
    setLang('zh');
    expect(rows[1].reason).toBe('not computed yet'); // data: the snapshot and the CSV carry it
    expect(cellLabel(rows[0], metric, { current: true })).toBe(`第 0 层，第 1 个头：${ZH['readout.error_fro_rel']} 0.250（当前显示）`);
    expect(cellLabel(rows[1], metric)).toBe(`第 1 层，第 0 个头：${ZH['readout.error_fro_rel']}无定义：尚未计算`);
    expect(reasonText('the readout is not a finite number')).toBe(ZH['overview.reason.notFinite']);
    expect(reasonText('M has a zero row')).toBe('M has a zero row');
    expect(tokensText(['<s>', 'Once', ' upon'])).toBe('“Once upon”（3 个 token）');
    const svg = overviewSvg({ rows, layers: 2, heads: 2, scale: overviewScale(rows), table: colorTable('viridis'), cmap: 'viridis', metric, caption: 'c' });
    expect(svg).toContain(`每一层、每个注意力头：${ZH['readout.error_fro_rel']}`);
    expect(svg).toMatch(/font-family="[^"]*WenQuanYi Micro Hei/);
    expect(svg).not.toContain('every layer and head');
  });
});
