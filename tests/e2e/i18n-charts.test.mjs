// i18n-charts.test.mjs: the figures in Chinese (docs/i18n.md) in Debian's headless Chromium. With lang=zh the
// heatmaps' captions, the hover text, the zoom form, the spectrum chart's axis titles (uPlot draws them on
// its canvas: recorded by recordCanvasText) and legend (DOM), the spectrum and entropy notes, the article's
// figures, the single-row view and the cost line are Chinese, with every glyph drawn; an exported SVG holds
// the Chinese title and caption and names a CJK font; switching back to English redraws the charts in
// English. At 1024×768, 1920×1080 (projector) and 390×844 nothing in the figures is clipped and the page
// does not scroll sideways. Screenshots: build/e2e/i18n-charts-*.png.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { servedLab } from './suite.mjs';
import { launch, openLab, waitSettled, fontReport, recordCanvasText, exportItem } from './browser.mjs';
import { CATALOGUES } from '../../web/i18n/i18n.mjs';

const ZH = CATALOGUES.zh, EN = CATALOGUES.en;
const CJK = /[\u3400-\u9fff]/;
/** English words left in Chinese text: three letters or more, names and units aside. */
const ENGLISH = /\b(?!(?:exp|std|log|nats|iid|MiB|KiB|GiB|Inf|NaN|float32|softmax|worker|accurate|fast|SVD|FLatten|FAVOR|Performer|DWC)\b)[A-Za-z]{3,}\b/;
const HASH = 'v=1&variant=focused&p=3&n=64&d=16&gen=clustered&figs=article&lang=zh';
const lab = servedLab(null);

/** Open the lab with the row view open and the article's figures drawn. */
async function open(browser, hash) {
  const { page, errors } = await openLab(browser.context, lab.server.url, { hash });
  await page.click('#row-view > summary');
  await page.waitForFunction(() => document.getElementById('row-M').textContent !== '');
  await page.waitForFunction(() => document.querySelector('#chart-spectrum .u-legend') && document.getElementById('article-note').textContent.length > 20);
  return { page, errors };
}

/** The figures' words as the reader sees them. */
function figureWords(page) {
  return page.evaluate(() => {
    const text = (sel) => document.querySelector(sel)?.textContent.trim() ?? null;
    return {
      capM: text('#cap-M'), capD: text('#fig-D figcaption'), dsNote: text('#ds-note'),
      specHead: text('.spectra > .chart-head h2'), specNote: text('#spec-note'),
      legend: [...document.querySelectorAll('#chart-spectrum .u-legend .u-series .u-label')].map((x) => x.textContent.trim()),
      errLegend: [...document.querySelectorAll('#chart-error .u-legend .u-series .u-label')].map((x) => x.textContent.trim()),
      entHead: text('.ent-head h2'), entNote: text('#ent-note'), cost: text('#cost'),
      articleHead: text('#fig-article h2'), articleNote: text('#article-note'), toggle: text('#figs-toggle'),
      rowSummary: text('#row-view > summary'), rowM: text('#row-M'), rowA: text('#row-A'),
      zoom: text('#zoom-box'), hover: text('#hover'),
    };
  });
}

/** Every character a canvas drew, by font (recordCanvasText). */
const canvasText = (page) => page.evaluate(() => Object.fromEntries([...window.__canvasText].map(([font, chars]) => [font, [...chars].join('')])));

/** Figures' text boxes whose words are cut off, and how far the page scrolls sideways. */
function clipped(page) {
  return page.evaluate(() => {
    const els = [...document.querySelectorAll('.heatmaps figcaption, .heatmaps .below span, #zoom-box button, #zoom-box span, .cbar .t, '
      + '.chart-head h2, .chart-head .note, .u-legend .u-label, #cost, #ent-note, #row-view summary, .row-head, .row-stats span, #figs-toggle')]
      .filter((el) => el.getClientRects().length > 0 && el.textContent.trim() && !el.classList.contains('sr-only')); // a screen reader's copy is clipped on purpose
    const vw = document.documentElement.clientWidth;
    return {
      cut: els.filter((el) => (el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX !== 'visible')
        || el.getBoundingClientRect().right > vw + 1).map((el) => el.textContent.trim().slice(0, 60)),
      sideways: document.documentElement.scrollWidth - document.documentElement.clientWidth,
    };
  });
}

describe('the figures in Chinese', () => {
  let browser;
  beforeAll(async () => { browser = await launch({ width: 1024, height: 768 }); await recordCanvasText(browser.context); });
  afterAll(async () => { await browser?.close(); });

  it('lang=zh at 1024×768: captions, notes, legends, axis titles, row view and cost line are Chinese; every glyph drawn', async () => {
    const { page, errors } = await open(browser, HASH);
    const box = await page.$eval('#hm-M', (c) => { c.scrollIntoView({ block: 'center' }); const r = c.getBoundingClientRect(); return { x: r.left, y: r.top }; });
    await page.mouse.click(box.x + 40, box.y + 60); // the cell under a click, as a hover says it
    await page.waitForFunction(() => /^行 /.test(document.getElementById('hover').textContent));
    const w = await figureWords(page);
    expect(w.capM).toMatch(/^FLatten（聚焦线性注意力）.*：矩阵 M$/);
    expect(w.capD).toBe(ZH['heatmap.capD']);
    expect(w.specHead).toBe(ZH['chart.spectrum.head']);
    expect(w.legend).toEqual(['QKᵀ ▲', 'exp(QKᵀ) ■', `${ZH['chart.series.M']} ●`, 'softmax A ◆']);
    expect(w.errLegend).toEqual([`${ZH['chart.series.M']} ●`, 'softmax A ◆']);
    expect(w.specNote).toMatch(/^由因子计算（r = 16）；在后台线程中用时 .* · 秩的上限 16（虚线） · 噪声底 /);
    expect(w.entHead).toBe(ZH['chart.entropy.head']);
    expect(w.entNote).toMatch(/^均值：M [\d.]+（实线），softmax [\d.]+（虚线） · 均匀 /);
    expect(w.cost).toMatch(/^n = 64 时的开销：.*的线性路径：[\d.]+k? 次乘加，.*（线性路径的开销是 softmax 的 (1\/[\d.]+|[\d.]+ 倍)）|（开销大致相同）/);
    expect(w.articleHead).toMatch(/^按原文 《线性注意力机制》 的画法 \(§3\.2, 有损的低秩近似\): QKᵀ（此处灰色 ▲/);
    expect(w.articleNote).toMatch(/^QKᵀ 有 16 个非零的 σ（d = 16）：/);
    expect(w.toggle).toBe(ZH['figure.toggle']);
    expect(w.rowSummary).toBe(ZH['row.summary']);
    expect(w.rowM).toMatch(/^M：熵 [\d.]+，最大为 ln 64 = 4\.16 · 占 90% 权重的键：64 个中的 \d+ 个$/);
    expect(w.rowA).toMatch(/^softmax：熵 /);
    expect(w.zoom).toMatch(/^行.*列.*查看.*整个矩阵$/);
    expect(w.hover).toMatch(/^行 \d+，列 \d+：M [\d.]+ · softmax [\d.]+ · M − A /);
    for (const [k, v] of Object.entries(w)) {
      if (Array.isArray(v) || (k === 'dsNote' && !v)) continue; // n = 64 is shown whole: no downsampling note
      expect(v, k).toMatch(CJK);
      expect(v.replace(/[“”][^“”]*[“”]/g, ''), k).not.toMatch(ENGLISH);
    }
    // uPlot draws its axis titles on the canvas: each title's characters in a font that names a CJK face
    const drawn = await canvasText(page);
    const cjkFonts = Object.entries(drawn).filter(([font]) => /WenQuanYi Micro Hei/.test(font)).map(([, chars]) => chars).join('');
    for (const key of ['chart.axis.r', 'figure.axis.i', 'figure.axis.D', 'figure.axis.sq', 'chart.entropy.axis', 'row.key0']) {
      for (const ch of ZH[key].replace(/[\s\d]/g, '')) expect(cjkFonts, `${key}: ${ch}`).toContain(ch);
    }
    for (const key of ['chart.axis.r', 'figure.axis.D']) for (const word of EN[key].match(/[A-Za-z]{3,}/g)) expect(Object.values(drawn).join('')).not.toContain(word);
    const fonts = await fontReport(page, { canvas: true });
    expect(fonts.missing).toEqual([]);
    expect(await clipped(page)).toEqual({ cut: [], sideways: 0 });
    await page.screenshot({ path: 'build/e2e/i18n-charts-zh-1024.png', fullPage: true });
    // above 384 tokens the heatmaps show blocks: the note says so in Chinese
    await page.evaluate(() => { location.hash = location.hash.replace('n=64', 'n=1024'); });
    await waitSettled(page);
    await page.waitForFunction(() => /^n = 1024/.test(document.getElementById('ds-note').textContent));
    expect((await figureWords(page)).dsNote).toMatch(/^n = 1024 显示为 \d+×\d+：每块 \d+×\d+，取块平均$/);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('an exported SVG in zh holds the Chinese title and caption and names a CJK font; the .zip stays data', async () => {
    const { page, errors } = await open(browser, HASH);
    const heat = (await exportItem(page, 'M.svg')).bytes.toString();
    expect(heat).toMatch(/font-family="DejaVu Sans, 'WenQuanYi Micro Hei'/);
    expect(heat).toMatch(/FLatten（聚焦线性注意力）：注意力矩阵 M/);
    expect(heat).toContain('>键 j<');
    const texts = await page.evaluate((t) => [...new DOMParser().parseFromString(t, 'image/svg+xml').querySelectorAll('text.caption')].map((x) => x.textContent), heat);
    expect(texts[0]).toMatch(/（p = 3.*） · 聚簇，种子 1，n = 64，d = 16，标准差 1，缩放 1\/√d$/);
    const spec = (await exportItem(page, 'spectrum.svg')).bytes.toString();
    expect(spec).toContain(ZH['export.title.spectrum']);
    expect(spec).toContain(`${ZH['chart.series.M']}<`);
    expect(spec).toContain(ZH['export.axis.sLog']);
    const ent = (await exportItem(page, 'entropy.svg')).bytes.toString();
    expect(ent).toContain(ZH['export.entropy.share']);
    const menu = await page.$$eval('#export .export-figs tr:not([hidden]) th', (ths) => ths.map((th) => th.textContent));
    expect(menu).toEqual(['M 的热力图', 'softmax A 的热力图', 'M − A 的热力图', 'M | A | M − A 三图并排', '奇异值', '截断 SVD 的误差', '行熵直方图']);
    const zip = await exportItem(page, 'bundle.zip');
    expect(zip.name).toBe('attnviz-focused-n64-export.zip');
    const text = zip.bytes.toString('utf8'), at = text.indexOf('attnviz export\n');
    const readme = text.slice(at, text.indexOf('\nlink: ', at));
    expect(readme).toMatch(/^attnviz export\n\nfocused \(FLatten\) \(p = 3.*\) · clustered seed 1, n = 64, d = 16, std 1, scale 1\/√d$/);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('switching to English redraws the figures in English (charts made again), and back', async () => {
    const { page, errors } = await open(browser, HASH);
    await page.click('#lang');
    await waitSettled(page);
    await page.waitForFunction(() => /variant M/.test(document.querySelector('#chart-spectrum .u-legend').textContent));
    const w = await figureWords(page);
    expect(w.cost).toMatch(/^cost at n = 64: /);
    expect(w.specNote).toMatch(/^factors \(r = 16\); .* in the worker · rank ceiling 16/);
    expect(w.zoom).toMatch(/rows.*cols.*zoom.*whole matrix/);
    expect(w.rowM).toMatch(/^M: entropy /);
    expect(w.articleNote).toMatch(/^QKᵀ has 16 nonzero σ/);
    expect(w.entNote).toMatch(/^mean: M /);
    expect(Object.entries(w).filter(([k, v]) => k !== 'articleHead' && CJK.test(String(v)))).toEqual([]); // the article's Chinese title aside
    await page.click('#lang');
    await waitSettled(page);
    await page.waitForFunction(() => /变体 M/.test(document.querySelector('#chart-spectrum .u-legend').textContent));
    expect((await figureWords(page)).cost).toMatch(/^n = 64 时的开销/);
    expect(errors).toEqual([]);
    await page.close();
  });
});

for (const [name, size, hash] of [['projector', { width: 1920, height: 1080 }, `${HASH}&projector=1`],
  ['phone', { width: 390, height: 844, deviceScaleFactor: 2, hasTouch: true }, HASH]]) {
  describe(`the figures in Chinese at ${size.width}×${size.height} (${name})`, () => {
    it('no clipped figure words, no sideways scrolling, every glyph drawn', async () => {
      const browser = await launch(size);
      try {
        await recordCanvasText(browser.context);
        const { page, errors } = await open(browser, hash);
        expect((await figureWords(page)).cost).toMatch(/^n = 64 时的开销/);
        expect(await clipped(page)).toEqual({ cut: [], sideways: 0 });
        expect((await fontReport(page, { canvas: true })).missing).toEqual([]);
        await page.screenshot({ path: `build/e2e/i18n-charts-zh-${name}.png`, fullPage: true });
        expect(errors).toEqual([]);
      } finally { await browser.close(); }
    });
  });
}
