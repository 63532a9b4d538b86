// export-figures.test.mjs: the exported figures as a post shows them (issue 32, item 7; web/io/export.mjs):
// titles and axes written as text (no TeX source), heatmaps with tick values on both axes and on the colour
// bar, the three-panel M | A | M − A figure, and labels placed off the curves' markers and the tick labels.
// Text boxes here are estimates (svg-text.mjs textUnits); tests/e2e/export.test.mjs measures them in Chromium.
import { describe, it, expect, afterEach } from 'vitest';
import { CATALOGUES, setLang } from '../../web/i18n/i18n.mjs';

const { en: EN, zh: ZH } = CATALOGUES;
/** What TeX source looks like in a figure's text: a sub- or superscript group, or a backslash command. */
export const TEX = /_\{|\^\{|\\/;

afterEach(() => setLang('en'));

describe('figure text without TeX source', () => {
  it('every string an exported figure may draw reads as text in both languages', () => {
    // the figures' titles, axes, legends and guide labels (export.*, the charts' axis and series words,
    // the sweep's title and legend)
    const FIGURE_KEY = /^(export\.(title|axis|entropy|ceiling|floor|partial|window|whole|blocks|fullRes|caption|gen|panel|fig)|chart\.(axis|series|entropy\.uniform)|sweep\.fig)\b/;
    let count = 0;
    for (const [lang, cat] of [['en', EN], ['zh', ZH]]) {
      for (const [key, text] of Object.entries(cat)) {
        if (!FIGURE_KEY.test(key)) continue;
        count++;
        expect(text, `${lang} ${key}`).not.toMatch(TEX);
      }
    }
    expect(count).toBeGreaterThan(60);
  });
  it('the error figure\'s title writes the sum with Unicode sub- and superscripts', () => {
    expect(EN['export.title.error']).toContain('e(r) = Σᵢ₌ᵣ₊₁ σᵢ² / Σᵢ σᵢ²');
    expect(ZH['export.title.error']).toContain('e(r) = Σᵢ₌ᵣ₊₁ σᵢ² / Σᵢ σᵢ²');
  });
});

const PNG = 'data:image/png;base64,iVBORw0KGgo=';
/** The <text> elements of an SVG string: {cls, text, x, y, size, anchor, rotated}. */
function texts(svg) {
  return [...svg.matchAll(/<text([^>]*)>(.*?)<\/text>/g)].map(([, a, inner]) => {
    const attr = (k) => new RegExp(`\\b${k}="([^"]*)"`).exec(a)?.[1];
    return { cls: attr('class') ?? '', text: inner.replace(/<[^>]+>/g, ''), x: Number(attr('x')), y: Number(attr('y')), rotated: /rotate/.test(a) };
  });
}

describe('heatmap axes and colour bars with values', () => {
  it('index ticks at round steps, at most about eight a side, at the tokens\' centres', async () => {
    const { heatmapAxes } = await import('../../web/io/export.mjs');
    const a = heatmapAxes({ r0: 0, r1: 95, c0: 0, c1: 95 }, null, 384);
    expect(a.tokens).toBe(false);
    expect(a.rows.map((r) => r.text)).toEqual(['0', '20', '40', '60', '80']);
    expect(a.cols).toEqual(a.rows);
    expect(a.rows[1].at).toBeCloseTo(20.5 / 96, 12);
    const big = heatmapAxes({ r0: 0, r1: 4095, c0: 0, c1: 4095 }, null, 256);
    expect(big.rows.map((r) => r.index)).toEqual([0, 1000, 2000, 3000, 4000]);
    // a zoom's window: its own indices, round numbers
    const z = heatmapAxes({ r0: 100, r1: 119, c0: 7, c1: 38 }, null, 384);
    expect(z.rows.map((r) => r.index)).toEqual([100, 105, 110, 115]);
    expect(z.cols.map((r) => r.index)).toEqual([10, 15, 20, 25, 30, 35]);
    for (const s of [z.rows, z.cols, big.rows, a.rows]) for (const r of s) expect(r.at).toBeGreaterThan(0), expect(r.at).toBeLessThan(1);
    // with tokens: the pieces, thinned only as far as 9-unit labels need (9.6 units a token: every other)
    const pieces = Array.from({ length: 40 }, (_, i) => (i ? ` w${i}` : '<s>'));
    const tok = heatmapAxes({ r0: 0, r1: 39, c0: 0, c1: 39 }, pieces, 384);
    expect(tok.tokens).toBe(true);
    expect(tok.rows.length).toBe(20);
    expect(tok.rows.slice(0, 2).map((r) => r.text)).toEqual(['<s>', '␣w2']);
    expect(heatmapAxes({ r0: 0, r1: 19, c0: 0, c1: 19 }, pieces.slice(0, 20), 384).rows.length).toBe(20);
  });

  it('colour bar values: the ends (≥, ≤ when clipped) and round values between, none crowding an end', async () => {
    const { colorbarTicks } = await import('../../web/io/export.mjs');
    expect(colorbarTicks(0, 0.0713, { clipped: true }).map((x) => x.text)).toEqual(['≥ 0.0713', '0.06', '0.04', '0.02', '0']);
    expect(colorbarTicks(-0.0615, 0.0615, { clipped: true, signed: true, size: 256 }).map((x) => x.text))
      .toEqual(['≥ +0.0615', '+0.05', '0', '−0.05', '≤ −0.0615']);
    // 0.04 is nearer the top (0.041) than 20 of 384 units: left out
    expect(colorbarTicks(0, 0.041).map((x) => x.text)).toEqual(['0.041', '0.02', '0']);
    expect(colorbarTicks(0, 0.052).map((x) => x.text)).toEqual(['0.052', '0.04', '0.02', '0']);
    expect(colorbarTicks(0.3, 0.3).map((x) => x.text)).toEqual(['0.3']);
  });

  it('a heatmap figure draws its index ticks (marks and numbers) and the colour bar\'s values', async () => {
    const { heatmapSvg, heatmapAxes, colorbarTicks } = await import('../../web/io/export.mjs');
    const { colorTable } = await import('../../web/render/colormap.mjs');
    const svg = heatmapSvg({ png: PNG, cells: 96, table: colorTable('viridis'), lo: 0, hi: 0.0713, title: 'M', caption: 'cap',
      ticks: colorbarTicks(0, 0.0713, { clipped: true }), axes: heatmapAxes({ r0: 0, r1: 95, c0: 0, c1: 95 }, null, 384) });
    const ts = texts(svg);
    expect(ts.filter((x) => x.cls === 'tick').map((x) => x.text)).toEqual(['0', '20', '40', '60', '80', '0', '20', '40', '60', '80']);
    expect(ts.filter((x) => x.cls === 'bar').map((x) => x.text)).toEqual(['≥ 0.0713', '0.06', '0.04', '0.02', '0']);
    expect(svg).toMatch(/<path d="(M[\d.]+ [\d.]+[hv]4){10}" stroke="#000000"/); // a mark for each label
    expect(ts.at(-1).cls).toBe('caption');
  });
});

describe('the M | A | M − A figure', () => {
  it('three panels side by side under one title, each with its label, axes and colour bar, one caption', async () => {
    const { heatmapsSvg, heatmapAxes, colorbarTicks } = await import('../../web/io/export.mjs');
    const { colorTable } = await import('../../web/render/colormap.mjs');
    const panel = (label, table, lo, hi, signed) => ({ png: PNG, cells: 64, table, lo, hi, size: 256, label,
      ticks: colorbarTicks(lo, hi, { signed, size: 256 }), axes: heatmapAxes({ r0: 0, r1: 63, c0: 0, c1: 63 }, null, 256) });
    const svg = heatmapsSvg({ title: 'elu: M, softmax A and M − A', caption: 'a caption',
      panels: [panel('M', colorTable('viridis'), 0, 0.1), panel('softmax A', colorTable('viridis'), 0, 0.2), panel('M − A', colorTable('rdbu'), -0.1, 0.1, true)] });
    const ts = texts(svg);
    expect(ts.filter((x) => x.cls === 'title').map((x) => x.text)).toEqual(['elu: M, softmax A and M − A']);
    expect(ts.filter((x) => x.cls === 'panel').map((x) => x.text)).toEqual(['M', 'softmax A', 'M − A']);
    expect(ts.filter((x) => x.cls === 'caption').map((x) => x.text)).toEqual(['a caption']);
    expect(ts.filter((x) => x.cls === 'axis').length).toBe(6);
    expect((svg.match(/<image /g) ?? []).length).toBe(3);
    expect((svg.match(/width="16"/g) ?? []).length).toBe(3 * 256); // three colour bars of 256 steps
    // the panels left to right, apart: each panel's image starts after the previous one's colour bar labels
    const images = [...svg.matchAll(/<image x="([\d.]+)"/g)].map((m) => Number(m[1]));
    const bars = ts.filter((x) => x.cls === 'bar');
    expect(images[1]).toBeGreaterThan(Math.max(...bars.filter((b) => b.x < images[1]).map((b) => b.x)) + 40);
    expect(images[2] - images[1]).toBeCloseTo(images[1] - images[0], 0);
    expect(bars.filter((b) => b.x > images[2]).map((b) => b.text)).toEqual(['+0.1', '+0.05', '0', '−0.05', '−0.1']);
    const w = Number(/width="(\d+)"/.exec(svg)[1]);
    expect(Math.max(...bars.map((b) => b.x))).toBeLessThan(w - 40);
  });
});
