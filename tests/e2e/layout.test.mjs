// The page's layout on real screens (issue 9, item 6), in Debian's headless Chromium: build/web (make web).
// It scrolls where it does not fit (1024×768, 200 % zoom), projector mode (#projector=1 and the header's
// toggle) sets every text at 18 px or more and gives the heatmaps the width, no control's label, value or
// picker is cut, log axes label at most one tick per decade without overlaps, and above n = 1024 the
// spectrum's index axis is logarithmic with the QKᵀ, exp(QKᵀ) and softmax curves on it. Screenshots in
// build/e2e/layout-*.png.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { serve } from '../../scripts/serve.mjs';
import { launch, openLab, waitSettled, canvasColours, recordCanvasText } from './browser.mjs';
import { loadAttnviz } from '../../web/wasm/attnviz.mjs';

const ROOT = 'build/web';
const REGISTRY = existsSync(`${ROOT}/attnviz.wasm`) ? (await loadAttnviz({ source: new URL(`../../${ROOT}/attnviz.wasm`, import.meta.url) })).registry : null;
const VARIANTS = REGISTRY?.variants.map((v) => v.name) ?? [];

let server, browser;

beforeAll(async () => {
  if (!existsSync(`${ROOT}/index.html`) || !existsSync(`${ROOT}/attnviz.wasm`)) throw new Error('run `make web` first');
  await mkdir('build/e2e', { recursive: true });
  server = await serve(ROOT, 0);
  browser = await launch({ width: 1024, height: 768 });
  await recordCanvasText(browser.context);
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/**
 * What is cut in the controls: a label, a value or a number box whose text is wider (or taller) than its
 * box, a label running into its slider or picker, a picker narrower than one of its options (each option
 * measured in a picker of the same style sized to it), anything outside the controls' column. [] when
 * nothing is.
 */
function clippedControls(page) {
  return page.evaluate(() => {
    const bad = [];
    const shown = (e) => e.getClientRects().length > 0;
    const name = (e) => `${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ''} "${(e.value || e.textContent || '').trim().slice(0, 40)}"`;
    const column = document.querySelector('.controls').getBoundingClientRect();
    const sticky = document.querySelector('.controls .sticky');
    if (sticky.scrollWidth > sticky.clientWidth + 1) bad.push(`the controls are ${sticky.scrollWidth} px wide in a ${sticky.clientWidth} px column`);
    for (const row of document.querySelectorAll('.controls .ctl')) {
      if (!shown(row)) continue;
      for (const e of row.children) {
        const b = e.getBoundingClientRect();
        if (b.right > column.right + 0.5 || b.left < column.left - 0.5) bad.push(`${name(e)} sticks out of the controls' column`);
      }
      for (const e of row.querySelectorAll('label, output, input[type=number]')) {
        if (e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1) {
          bad.push(`${name(e)}: its text is ${e.scrollWidth}×${e.scrollHeight} px in a ${e.clientWidth}×${e.clientHeight} box`);
        }
      }
      const label = row.querySelector('label'), control = row.querySelector('input:not([type=checkbox]), select');
      if (label && control) {
        const l = label.getBoundingClientRect(), c = control.getBoundingClientRect();
        if (l.right > c.left + 0.5 && l.top < c.bottom && l.bottom > c.top) bad.push(`${name(label)} runs into its control`);
      }
      for (const sel of row.querySelectorAll('select')) {
        const has = sel.getBoundingClientRect().width;
        for (const o of sel.options) {
          const probe = document.createElement('select');
          probe.append(new Option(o.text));
          probe.style.cssText = 'position: absolute; visibility: hidden; width: auto; min-width: 0; max-width: none';
          row.append(probe);
          const needs = probe.getBoundingClientRect().width;
          probe.remove();
          if (needs > has + 0.5) bad.push(`${name(sel)}: "${o.text}" needs ${needs.toFixed(1)} px, the picker has ${has.toFixed(1)}`);
        }
      }
    }
    return bad;
  });
}

/** clippedControls for every variant (each shows its own knobs); the variant is restored. */
async function clippedForEveryVariant(page) {
  const before = await page.evaluate(() => window.attnviz.state.variant);
  const bad = [];
  for (const v of VARIANTS) {
    await page.selectOption('#k-variant', v);
    await waitSettled(page);
    for (const b of await clippedControls(page)) bad.push(`${v}: ${b}`);
  }
  await page.selectOption('#k-variant', before);
  await waitSettled(page);
  return bad;
}

/**
 * The tick labels of both charts' axes as uPlot drew them: per chart and axis, the scale's distribution
 * (3: log), each label's value and text, and its box in CSS px (measured in the axis's font).
 */
function tickLabels(page) {
  return page.evaluate(() => {
    const ctx = document.createElement('canvas').getContext('2d');
    const out = [];
    for (const [chart, c] of Object.entries(window.attnviz.charts)) {
      if (!c?.chart) continue;
      const u = c.chart;
      u.axes.forEach((axis, i) => {
        const scale = u.scales[axis.scale];
        const vertical = axis.side % 2 === 1;
        const px = axis.font[2];
        ctx.font = axis.font[0].replace(/\d+(\.\d+)?px/, `${px}px`);
        const labels = [];
        (axis._values ?? []).forEach((text, k) => {
          if (text === null || text === undefined || text === '') return;
          const value = axis._splits[k];
          const at = u.valToPos(value, axis.scale);
          const w = ctx.measureText(String(text)).width;
          const box = vertical ? [at - px * 0.6, at + px * 0.6] : [at - w / 2, at + w / 2];
          labels.push({ value, text: String(text), box });
        });
        out.push({ chart, axis: i, distr: scale.distr, fontPx: px, vertical, labels });
      });
    }
    return out;
  });
}

/** Problems with the tick labels: overlapping boxes, and on a log axis more than one label per decade. */
function tickProblems(axes) {
  const bad = [];
  for (const a of axes) {
    const where = `${a.chart} ${a.vertical ? 'y' : 'x'} axis`;
    const boxes = a.labels.map((l) => l.box).sort((p, q) => p[0] - q[0]);
    for (let k = 1; k < boxes.length; k++) {
      if (boxes[k][0] < boxes[k - 1][1]) { bad.push(`${where}: labels overlap (${a.labels.map((l) => l.text).join(', ')})`); break; }
    }
    if (a.distr === 3) {
      const decades = a.labels.map((l) => Math.log10(l.value));
      if (decades.some((e) => Math.abs(e - Math.round(e)) > 1e-9)) bad.push(`${where}: a label off a power of ten (${a.labels.map((l) => l.text).join(', ')})`);
      if (new Set(decades.map(Math.round)).size !== decades.length) bad.push(`${where}: two labels in one decade`);
    }
  }
  return bad;
}

/** Every visible element's own text with its font size (px), KaTeX's inner boxes left out. */
function textSizes(page) {
  return page.evaluate(() => {
    const out = [];
    for (const el of document.body.querySelectorAll('*')) {
      if (el.closest('.katex-mathml, script, style, option') || (el.closest('.katex') && !el.classList.contains('katex'))) continue;
      let text = '';
      for (const n of el.childNodes) if (n.nodeType === Node.TEXT_NODE) text += n.data;
      if (el.classList.contains('katex')) text = el.textContent;
      if (el instanceof HTMLSelectElement) text = el.selectedOptions[0]?.textContent ?? '';
      if (el instanceof HTMLInputElement && el.type === 'number') text = el.value;
      if (!/\S/.test(text) || !el.getClientRects().length || getComputedStyle(el).visibility === 'hidden') continue;
      out.push({ text: text.trim().slice(0, 40), px: parseFloat(getComputedStyle(el).fontSize) });
    }
    return out;
  });
}

describe('layout at 1024×768', () => {
  let page, errors;
  beforeAll(async () => { ({ page, errors } = await openLab(browser.context, server.url)); });
  afterAll(async () => { await page?.close(); });

  it('scrolls to reveal the spectrum legend and the entropy histogram, and nothing is wider than the window', async () => {
    const doc = await page.evaluate(() => ({ scroll: document.documentElement.scrollHeight, width: document.documentElement.scrollWidth, overflow: getComputedStyle(document.body).overflowY }));
    expect(doc.overflow).not.toBe('hidden');
    expect(doc.scroll).toBeGreaterThan(768);
    expect(doc.width).toBeLessThanOrEqual(1024);
    await page.screenshot({ path: 'build/e2e/layout-1024x768.png', fullPage: true });
    for (const sel of ['#chart-spectrum .u-legend', '#ent-hist']) {
      await page.locator(sel).scrollIntoViewIfNeeded();
      const r = await page.$eval(sel, (e) => { const b = e.getBoundingClientRect(); return { top: b.top, bottom: b.bottom, width: b.width, height: b.height, scrollY, innerHeight }; });
      if (sel === '#ent-hist') expect(r.scrollY, sel).toBeGreaterThan(0); // below the first screen
      expect(r.top, sel).toBeGreaterThanOrEqual(0);
      expect(r.bottom, sel).toBeLessThanOrEqual(r.innerHeight);
    }
    const hist = await page.$eval('#ent-hist', (e) => e.getBoundingClientRect());
    expect(hist.width).toBeGreaterThan(400);
    expect(hist.height).toBeGreaterThan(100);
    expect((await canvasColours(page, 'ent-hist')).colours).toBeGreaterThan(3);
    await page.screenshot({ path: 'build/e2e/layout-1024x768-histogram.png' });
    await page.evaluate(() => scrollTo(0, 0));
    // the heatmaps, side by side, and the spectrum's top in the first screen
    const hm = await page.$$eval('.hm', (es) => es.map((e) => e.getBoundingClientRect()).map((b) => ({ top: b.top, bottom: b.bottom, width: b.width })));
    expect(new Set(hm.map((b) => Math.round(b.top))).size).toBe(1);
    expect(Math.min(...hm.map((b) => b.width))).toBeGreaterThanOrEqual(120);
    expect(await page.$eval('#chart-spectrum', (e) => e.getBoundingClientRect().top)).toBeLessThan(768 - 150);
    expect(errors).toEqual([]);
  });

  it('cuts no control label, value or variant name, for every variant', async () => {
    expect(await clippedForEveryVariant(page)).toEqual([]);
    // the variant picker shows whole labels: the longest is as wide as it needs
    expect(await page.$eval('#k-variant', (s) => s.options.length)).toBe(VARIANTS.length);
  });

  it('labels log axes at most once per decade, without overlaps', async () => {
    for (const hash of ['', 'v=1&variant=elu', 'v=1&variant=softmax&n=64']) {
      await page.evaluate((h) => { location.hash = h; }, hash);
      await waitSettled(page);
      const axes = await tickLabels(page);
      expect(axes.filter((a) => a.distr === 3).length, hash).toBeGreaterThanOrEqual(2);
      expect(axes.every((a) => a.labels.length >= 2 || (a.distr === 3 && a.vertical === false)), hash).toBe(true);
      expect(tickProblems(axes), hash).toEqual([]);
    }
    expect(errors).toEqual([]);
  });

  it('says "about the same cost" where the quadratic and the linear path cost about the same', async () => {
    await page.evaluate(() => { location.hash = 'v=1&variant=elu&n=64&d=64'; });
    await waitSettled(page);
    const cost = await page.textContent('#cost');
    expect(cost).not.toMatch(/\b1× (cheaper|dearer)/);
    expect(cost).toMatch(/\(about the same cost\)$/);
  });
});

describe('projector mode at 1920×1080', () => {
  let page, errors;
  beforeAll(async () => {
    ({ page, errors } = await openLab(browser.context, server.url));
    await page.setViewportSize({ width: 1920, height: 1080 });
    await waitSettled(page);
  });
  afterAll(async () => { await page?.close(); });

  it('the header toggle sets #projector=1; text ≥ 18 px, on canvases too; heatmaps take the width', async () => {
    expect(await page.$eval('#projector', (b) => b.getAttribute('aria-pressed'))).toBe('false');
    const normal = await page.$eval('#hm-M', (e) => e.getBoundingClientRect().width);
    await page.evaluate(() => window.__canvasText.clear());
    await page.click('#projector');
    await waitSettled(page);
    expect(await page.evaluate(() => window.attnviz.state.projector)).toBe(true);
    expect(page.url()).toContain('projector=1');
    expect(await page.$eval('#projector', (b) => b.getAttribute('aria-pressed'))).toBe('true');
    await page.evaluate(() => document.fonts.ready);
    await page.screenshot({ path: 'build/e2e/layout-projector-1920x1080.png', fullPage: true });

    const small = (await textSizes(page)).filter((t) => t.px < 18);
    expect(small.slice(0, 12).map((t) => `"${t.text}" at ${t.px} px`)).toEqual([]);
    expect(parseFloat(await page.$eval('body', (b) => getComputedStyle(b).fontSize))).toBeGreaterThanOrEqual(18);
    // the charts' axes and the histogram, drawn again in projector mode
    const canvasFonts = await page.evaluate(() => [...window.__canvasText.keys()]);
    expect(canvasFonts.length).toBeGreaterThan(0);
    expect(canvasFonts.filter((f) => !(parseFloat(f.match(/(\d+(\.\d+)?)px/)?.[1]) >= 18))).toEqual([]);
    expect(await page.evaluate(() => window.attnviz.charts.spectrum.chart.axes.map((a) => a.font[2]))).toEqual([18, 18]);

    // three heatmaps in a row, together most of the width beside the controls, each within the window
    const row = await page.evaluate(() => {
      const figs = [...document.querySelectorAll('.heat')].map((f) => f.getBoundingClientRect());
      const box = document.querySelector('.heatmaps').getBoundingClientRect();
      return { tops: figs.map((b) => Math.round(b.top)), used: figs.at(-1).right - figs[0].left, width: box.width,
        hm: document.getElementById('hm-M').getBoundingClientRect().height, innerHeight, overflow: document.documentElement.scrollWidth - innerWidth };
    });
    expect(new Set(row.tops).size).toBe(1);
    expect(row.used / row.width).toBeGreaterThan(0.9);
    expect(row.hm).toBeGreaterThan(normal * 1.2);
    expect(row.hm).toBeGreaterThanOrEqual(300);
    expect(row.hm).toBeLessThan(row.innerHeight - 100);
    expect(row.overflow).toBeLessThanOrEqual(0);
    expect(errors).toEqual([]);
  });

  it('cuts no control label, value or variant name, and labels log axes without overlaps', async () => {
    expect(await page.evaluate(() => window.attnviz.state.projector)).toBe(true);
    expect(await clippedForEveryVariant(page)).toEqual([]);
    expect(tickProblems(await tickLabels(page))).toEqual([]);
  });

  it('a link with projector=1 opens in projector mode; the toggle turns it off', async () => {
    const p2 = await openLab(browser.context, server.url, { hash: 'v=1&variant=elu&projector=1' });
    expect(await p2.page.evaluate(() => [window.attnviz.state.projector, 'projector' in document.documentElement.dataset])).toEqual([true, true]);
    expect(parseFloat(await p2.page.$eval('body', (b) => getComputedStyle(b).fontSize))).toBeGreaterThanOrEqual(18);
    await p2.page.click('#projector');
    await waitSettled(p2.page);
    expect(await p2.page.evaluate(() => [window.attnviz.state.projector, 'projector' in document.documentElement.dataset])).toEqual([false, false]);
    expect(p2.page.url()).toContain('projector=0');
    expect(p2.errors).toEqual([]);
    await p2.page.close();
  });
});

describe('200 % zoom (960×540 CSS px at device scale 2)', () => {
  let zoomed, page, errors;
  beforeAll(async () => {
    zoomed = await launch({ width: 960, height: 540, deviceScaleFactor: 2 });
    ({ page, errors } = await openLab(zoomed.context, server.url));
  });
  afterAll(async () => { await zoomed?.close(); });

  it('scrolls, fits the width, cuts no control and reaches the histogram', async () => {
    expect(await page.evaluate(() => devicePixelRatio)).toBe(2);
    const doc = await page.evaluate(() => ({ scroll: document.documentElement.scrollHeight, width: document.documentElement.scrollWidth }));
    expect(doc.scroll).toBeGreaterThan(540);
    expect(doc.width).toBeLessThanOrEqual(960);
    await page.screenshot({ path: 'build/e2e/layout-200pct.png', fullPage: true });
    await page.locator('#ent-hist').scrollIntoViewIfNeeded();
    const r = await page.$eval('#ent-hist', (e) => { const b = e.getBoundingClientRect(); return { top: b.top, bottom: b.bottom, innerHeight }; });
    expect(r.top).toBeGreaterThanOrEqual(0);
    expect(r.bottom).toBeLessThanOrEqual(r.innerHeight);
    expect(await clippedForEveryVariant(page)).toEqual([]);
    expect(tickProblems(await tickLabels(page))).toEqual([]);
    expect(errors).toEqual([]);
  });
});

describe('the spectrum above n = 1024', () => {
  it('runs i on a log axis over the whole curve, with QKᵀ, exp(QKᵀ) and softmax beside the variant', async () => {
    const { page, errors } = await openLab(browser.context, server.url, { hash: 'v=1&variant=elu&n=2048&d=64' });
    await page.waitForFunction(() => ['S', 'E', 'A'].every((k) => window.attnviz.view.overlay[k]?.sv.length > 0), null, { timeout: 60000 });
    await waitSettled(page, 60000);
    const s = await page.evaluate(() => {
      const u = window.attnviz.charts.spectrum.chart;
      const last = (a) => { for (let i = a.length - 1; i >= 0; i--) if (a[i] != null) return i; return -1; };
      const { left, width } = u.bbox;
      return {
        distr: u.scales.x.distr, min: u.scales.x.min, max: u.scales.x.max, n: u.data[0].length,
        curves: [1, 2, 3, 4].map((k) => {
          const i = last(u.data[k]);
          return { count: u.data[k].filter((v) => v != null).length, end: u.data[0][i], at: (u.valToPos(u.data[0][i], 'x', true) - left) / width };
        }),
      };
    });
    expect(s.distr).toBe(3);
    expect(s.min).toBe(1);
    // every curve ends inside the axis, and none is squeezed into its first few pixels
    for (const c of s.curves) {
      expect(c.count).toBeGreaterThanOrEqual(20);
      expect(c.end).toBeLessThanOrEqual(s.max);
      expect(c.at).toBeGreaterThan(0.5);
      expect(c.at).toBeLessThanOrEqual(1.0001);
    }
    expect(tickProblems(await tickLabels(page))).toEqual([]);
    await page.screenshot({ path: 'build/e2e/layout-n2048.png' });
    expect(errors).toEqual([]);
    await page.close();
  });
});
