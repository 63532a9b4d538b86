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

/** The markers' boxes inside a chart's plot (the shapes of its <g fill> groups before the legend), estimated. */
function markerBoxes(svg) {
  const plot = svg.slice(svg.indexOf('clip-path="url(#plot)"'), svg.indexOf('stroke-width="2"')); // up to the legend's first stroke
  const boxes = [];
  for (const g of plot.matchAll(/<g fill="[^"]+"[^>]*>([\s\S]*?)<\/g>/g)) {
    for (const m of g[1].matchAll(/<circle cx="([\d.]+)" cy="([\d.]+)" r="([\d.]+)"|<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)"|<path d="M([\d.]+) ([\d.]+)/g)) {
      if (m[1]) boxes.push({ x0: +m[1] - +m[3], x1: +m[1] + +m[3], y0: +m[2] - +m[3], y1: +m[2] + +m[3] });
      else if (m[4]) boxes.push({ x0: +m[4], x1: +m[4] + +m[6], y0: +m[5], y1: +m[5] + +m[7] });
      else boxes.push({ x0: +m[8] - 3.5, x1: +m[8] + 3.5, y0: +m[9], y1: +m[9] + 7.7 }); // a triangle or diamond from its top
    }
  }
  return boxes;
}
/** A 10-unit label's box as drawn (DejaVu Sans: 0.61 em a Latin character on average; ascent 9, descent 3). */
function textBox({ x, y, text, anchor }) {
  const w = 6.1 * [...text].length, x0 = anchor === 'end' ? x - w : x;
  return { x0, x1: x0 + w, y0: y - 9, y1: y + 3 };
}
const meet = (a, b) => a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;

describe('labels that avoid markers', () => {
  it('the rank ceiling\'s label is placed where no marker and no curve is (it was drawn on the markers)', async () => {
    const { chartSvg } = await import('../../web/io/export.mjs');
    // curves along the top of the plot, across the ceiling at i = 16: the label's old place (beside the
    // line, 12 units under the top) is where their markers are
    const x = Array.from({ length: 96 }, (_, i) => i + 1);
    const svg = chartSvg({ title: 't', caption: 'c', xLabel: 'i', yLabel: 'σ', logY: true, vlines: [{ x: 16, label: 'rank ceiling 16' }],
      series: [
        { label: 'a', color: '#0072b2', marker: 'circle', x, y: x.map((i) => 0.9 - i * 1e-3) },
        { label: 'b', color: '#e69f00', marker: 'square', x, y: x.map((i) => 0.7 - i * 1e-3) },
        { label: 'c', color: '#cc79a7', marker: 'diamond', x, y: x.map((i) => 10 ** (-i / 10)) },
      ] });
    const label = [...svg.matchAll(/<text x="([\d.]+)" y="([\d.]+)"(?: text-anchor="(\w+)")? font-size="10"[^>]*>(rank ceiling 16)</g)]
      .map((m) => textBox({ x: +m[1], y: +m[2], anchor: m[3], text: m[4] }));
    expect(label.length).toBe(1);
    const markers = markerBoxes(svg);
    expect(markers.length).toBeGreaterThanOrEqual(20);
    expect(markers.filter((b) => meet(b, label[0]))).toEqual([]);
    // nor on a curve: no vertex of the curves' paths inside it
    for (const [, d] of svg.matchAll(/<path d="(M[^"]+)" fill="none"/g)) {
      for (const [, px, py] of d.matchAll(/[ML]([\d.]+) ([\d.]+)/g)) expect(meet({ x0: +px, x1: +px, y0: +py, y1: +py }, label[0]), `${px},${py}`).toBe(false);
    }
  });

  it('the entropy means sit in a lane of their own, clear of the tick labels; the uniform label inside the figure', async () => {
    const { entropySvg } = await import('../../web/io/export.mjs');
    const width = 640;
    // means at the axis' ticks (2 and 4 of ln n = 4: the 0.5 and 1 ticks) and the uniform line at the right end
    const svg = entropySvg({ bins: 4, top: 4, M: [0.1, 0.2, 0.3, 0.4], A: [0.4, 0.3, 0.2, 0.1], max: 0.4, meanM: 1, meanA: 0.5, uniform: 1, uniformValue: 4 },
      { title: 'row entropy', caption: 'c', width });
    const ticks = [...svg.matchAll(/<text x="([\d.]+)" y="([\d.]+)" text-anchor="middle"[^>]*>([\d.]+)</g)]
      .map((m) => ({ x0: +m[1] - 3.7 * m[3].length, x1: +m[1] + 3.7 * m[3].length, y0: +m[2] - 11, y1: +m[2] + 3 }));
    expect(ticks.length).toBe(5);
    const means = [...svg.matchAll(/<path d="M([\d.]+) ([\d.]+)l-5 ([\d.]+)h10Z"/g)].map((m) => ({ x0: +m[1] - 5, x1: +m[1] + 5, y0: +m[2], y1: +m[2] + +m[3] }));
    expect(means.length).toBe(2);
    for (const mean of means) for (const tk of ticks) expect(meet(mean, tk)).toBe(false);
    const uni = /<text x="([\d.]+)" y="[\d.]+" text-anchor="middle" fill="#b8860b"[^>]*>([^<]+)</.exec(svg);
    expect(uni[2]).toBe('uniform = 4');
    expect(+uni[1] + 3.7 * uni[2].length).toBeLessThanOrEqual(width);
  });
});
