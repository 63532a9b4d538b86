// i18n-panels.test.mjs: the panels in Chinese (docs/i18n.md) in Debian's headless Chromium: each mechanism
// view, the sweep, the overview of every layer and head, the model box and the own-input box, with lang=zh
// at 1024×768 and on a 390×844 phone. Their visible words (text, and the titles and aria labels a pointer or
// a screen reader gives) are Chinese but for proper names, symbols and code; no label is clipped; the page
// does not scroll sideways; every character drawn, canvas text too, has a glyph. Switching the language
// on an open view rewrites its words and leaves window.attnviz.mechanisms() and overview() as they were.
// The model is stories260K from ATTNVIZ_SHARED, else the tiny checkpoint tiny-model.mjs writes (the page's
// path is the same). Screenshots: build/e2e/i18n-panels-*.png.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '../../scripts/serve.mjs';
import { launch, openLab, fontReport, recordCanvasText } from './browser.mjs';
import { STORIES, skipped } from '../js/shared-data.mjs';
import { tinyFiles } from './tiny-model.mjs';
import { CATALOGUES } from '../../web/i18n/i18n.mjs';

const ROOT = 'build/web';
const HAVE = existsSync(join(STORIES, 'stories260K.bin'));
const SIZES = [{ name: 'desktop', width: 1024, height: 768 }, { name: 'phone', width: 390, height: 844 }];
let server, files;

beforeAll(async () => {
  if (!existsSync(`${ROOT}/index.html`) || !existsSync(`${ROOT}/attnviz.wasm`)) throw new Error('run `make web` first');
  await mkdir('build/e2e', { recursive: true });
  server = await serve(ROOT, 0);
  files = HAVE ? { model: join(STORIES, 'stories260K.bin'), tok: join(STORIES, 'tok512.bin') } : tinyFiles(mkdtempSync(join(tmpdir(), 'attnviz-e2e-i18n-')));
  if (!HAVE) skipped('e2e i18n-panels.test.mjs: the overview and the model box on stories260K; a tiny checkpoint stands in');
});
afterAll(async () => { await server?.close(); });

/**
 * What in `roots` (selectors) is still English, is clipped, and how far the page scrolls sideways. A text
 * is English when it has a Latin word of two letters or more and no Chinese character, and is not one of
 * the proper names, units and code the Chinese page writes as they are.
 */
function inspect(page, roots) {
  return page.evaluate((roots) => {
    const CJK = /[\u3400-\u9fff]/;
    const KEEP = /^(softmax|elu\+1|Performer|Hedgehog|W\.npy|SVG|PNG|CSV|\d+ MB|ms|N = d|L\d+H\d+( .*)?|viridis|cividis|magma|gray)$/;
    // a file's name is the reader's, not the page's words
    const english = (s) => { const x = s.replace(/\S+\.(json|npy|bin)\b/g, '').replace(/\s+/g, ' ').trim(); return /(?<![.\w])[A-Za-z]{2,}/.test(x) && !CJK.test(x) && !KEEP.test(x); };
    const shown = (el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';
    const left = [], clipped = [];
    for (const sel of roots) {
      const root = document.querySelector(sel);
      if (!root || !shown(root)) continue;
      for (const el of [root, ...root.querySelectorAll('*')]) {
        if (!shown(el) || el.closest('textarea, script, style')) continue; // the model's text is the reader's
        let own = '';
        for (const n of el.childNodes) if (n.nodeType === Node.TEXT_NODE) own += n.data;
        if (el instanceof HTMLSelectElement) own = el.selectedOptions[0]?.textContent ?? '';
        for (const [what, s] of [['text', own], ['title', el.getAttribute('title') ?? ''], ['aria-label', el.getAttribute('aria-label') ?? '']]) {
          if (english(s)) left.push(`${sel} ${el.tagName.toLowerCase()} ${what}: ${s.trim().slice(0, 80)}`);
        }
        // .sr-only is clipped to a pixel on purpose: what it says is for a screen reader
        if (own.trim() && !el.closest('.sr-only') && el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX !== 'visible') clipped.push(`${sel}: ${own.trim().slice(0, 60)}`);
      }
    }
    // the figures side by side in a view's row (a chart, a heatmap, a table), their canvases included, must not
    // overlap: a chart made wider than its box covered the heatmap beside it
    const overlaps = [];
    for (const row of document.querySelectorAll('.mech-pane:not([hidden]) .mech-row')) {
      const boxes = [...row.children].filter(shown).map((c) => {
        const rs = [c, ...c.querySelectorAll('canvas')].map((x) => x.getBoundingClientRect()).filter((r) => r.width > 0);
        return { name: c.className || c.tagName, l: Math.min(...rs.map((r) => r.left)), r: Math.max(...rs.map((r) => r.right)), t: Math.min(...rs.map((r) => r.top)), b: Math.max(...rs.map((r) => r.bottom)) };
      });
      for (const [i, a] of boxes.entries()) {
        for (const b of boxes.slice(i + 1)) if (a.l < b.r - 1 && b.l < a.r - 1 && a.t < b.b - 1 && b.t < a.b - 1) overlaps.push(`${a.name} / ${b.name}`);
      }
    }
    return { left, clipped, overlaps, sideways: document.documentElement.scrollWidth - document.documentElement.clientWidth };
  }, roots);
}

const mech = (page) => page.evaluate(() => window.attnviz.mechanisms());
async function until(page, pred, what, timeout = 90000) {
  const t0 = Date.now();
  for (;;) {
    const m = await mech(page);
    if (pred(m)) return m;
    if (Date.now() - t0 > timeout) throw new Error(`${what}: timed out; last: ${JSON.stringify(m).slice(0, 300)}`);
    await page.waitForTimeout(100);
  }
}
/** Click the header's language button and wait until the page speaks `lang`. */
async function switchTo(page, lang) {
  await page.click('#lang');
  await page.waitForFunction((tag) => document.documentElement.lang === tag, lang === 'zh' ? 'zh-CN' : 'en');
  await page.evaluate(() => window.attnviz.snapshot());
}

// each view with small sizes, and what says it has finished; what of its snapshot must not change with the
// language (the scaling view's timings differ between runs: its sizes and structure are compared)
const VIEWS = {
  stepper: { hash: 'variant=elu&causal=1&n=48&d=16&step=10', done: (m) => m.stepper?.t === 10, part: (m) => m.stepper },
  scaling: { hash: 'variant=elu&causal=1&d=16&budget=16', done: (m) => m.scaling.done, part: (m) => ({ ...m.scaling, memoryGrowth: null, points: m.scaling.points.map((p) => ({ ...p, ms: null })) }) },
  recall: { hash: 'pairs=64&mem_d=16', done: (m) => m.recall.done && m.recall.overwrite, part: (m) => m.recall },
  distill: { hash: 'variant=hedgehog&n=32&d=16&steps=40', done: (m) => m.distill.done && m.distill.t === 40, part: (m) => m.distill },
};

describe('the mechanism views in Chinese', () => {
  let browser;
  beforeAll(async () => { browser = await launch({ width: 1024, height: 768 }); await recordCanvasText(browser.context); });
  afterAll(async () => { await browser?.close(); });

  for (const [view, v] of Object.entries(VIEWS)) {
    it(`${view}: switched to Chinese, every word is Chinese, nothing clipped, every glyph drawn; its numbers are the same`, async () => {
      const { page, errors } = await openLab(browser.context, server.url, { hash: `${v.hash}&mech=${view}` });
      try {
        const en = v.part(await until(page, v.done, view));
        if (view === 'distill') await page.waitForTimeout(300); // the chart's last draw
        const before = await inspect(page, ['#mech']);
        expect(before.left.length, 'English before the switch').toBeGreaterThan(3);
        expect(before.overlaps).toEqual([]);
        await switchTo(page, 'zh');
        const zh = v.part(await until(page, v.done, view));
        expect(zh).toEqual(en);
        // the stepper names the variant as the variant picker does, not by its link key
        if (view === 'stepper') expect(await page.textContent('#mech-stepper .note')).toMatch(new RegExp(`^${CATALOGUES.zh['variant.elu'].replace(/[+()]/g, '\\$&')}：`));
        if (view === 'distill') await page.waitForTimeout(300); // the chart's last draw
        const r = await inspect(page, ['#mech']);
        expect(r.left).toEqual([]);
        expect(r.clipped).toEqual([]);
        expect(r.overlaps).toEqual([]);
        expect(r.sideways).toBeLessThanOrEqual(0);
        expect((await fontReport(page, { root: '#mech' })).missing).toEqual([]);
        await page.locator('#mech').screenshot({ path: `build/e2e/i18n-panels-${view}-1024.png` });
        await switchTo(page, 'en'); // and back: the words are English again
        expect((await inspect(page, ['#mech'])).left.length).toBeGreaterThan(3);
        expect(v.part(await mech(page))).toEqual(en);
        expect(errors).toEqual([]);
      } finally { await page.close(); }
    }, 180000);
  }
});

for (const size of SIZES) {
  describe(`the panels with lang=zh at ${size.width}×${size.height} (${size.name})`, () => {
    let browser;
    beforeAll(async () => { browser = await launch({ width: size.width, height: size.height }); await recordCanvasText(browser.context); });
    afterAll(async () => { await browser?.close(); });

    if (size.name === 'phone') {
      for (const [view, v] of Object.entries(VIEWS)) {
        it(`the ${view} view opened in Chinese`, async () => {
          const { page, errors } = await openLab(browser.context, server.url, { hash: `${v.hash}&mech=${view}&lang=zh` });
          try {
            await until(page, v.done, view);
            await page.waitForTimeout(300);
            const r = await inspect(page, ['#mech']);
            expect(r.left).toEqual([]);
            expect(r.clipped).toEqual([]);
            expect(r.overlaps).toEqual([]);
            expect(r.sideways).toBeLessThanOrEqual(0);
            await page.locator('#mech').screenshot({ path: `build/e2e/i18n-panels-${view}-${size.width}.png` });
            expect(errors).toEqual([]);
          } finally { await page.close(); }
        }, 180000);
      }
    }

    it('the sweep: pickers, legend, status', async () => {
      const { page, errors } = await openLab(browser.context, server.url, { hash: 'variant=performer&m=16&sweep=m&sweep_seeds=2&lang=zh' });
      try {
        const s = await page.evaluate(() => window.attnviz.sweep());
        expect(s.values.length).toBeGreaterThan(3);
        await page.waitForFunction(() => /s（/.test(document.querySelector('.sweep-note')?.textContent ?? ''));
        const r = await inspect(page, ['#sweep-box']);
        expect(r.left).toEqual([]);
        expect(r.clipped).toEqual([]);
        expect(r.sideways).toBeLessThanOrEqual(0);
        expect((await fontReport(page, { root: '#sweep-box' })).missing).toEqual([]);
        await page.locator('#sweep-box').screenshot({ path: `build/e2e/i18n-panels-sweep-${size.width}.png` });
        // a knob the variant lacks (a link's): said in Chinese too
        await page.evaluate(() => { location.hash = 'variant=elu&sweep=m&lang=zh'; });
        await page.waitForFunction(() => /没有可扫描的参数“m”/.test(document.querySelector('.sweep-note')?.textContent ?? ''));
        expect((await inspect(page, ['#sweep-box'])).left).toEqual([]);
        expect(errors).toEqual([]);
      } finally { await page.close(); }
    }, 120000);

    if (size.name === 'desktop') {
      it('the sweep in projector mode: the last x tick label ("10,000", centred on the plot\'s edge) fits on the canvas', async () => {
        const { page, errors } = await openLab(browser.context, server.url, { hash: 'variant=performer&m=16&sweep=m&sweep_seeds=2&lang=zh&projector=1' });
        try {
          await page.evaluate(() => window.attnviz.sweep());
          const r = await page.evaluate(() => {
            const box = document.querySelector('#sweep-box .uplot'), over = box.querySelector('.u-over').getBoundingClientRect();
            const ctx = document.createElement('canvas').getContext('2d');
            ctx.font = `${getComputedStyle(document.querySelector('.sweep-chart')).fontSize} system-ui, sans-serif`;
            return { room: box.querySelector('canvas').getBoundingClientRect().right - over.right, half: ctx.measureText('10,000').width / 2 };
          });
          expect(r.room).toBeGreaterThanOrEqual(r.half);
          expect(errors).toEqual([]);
        } finally { await page.close(); }
      });
    }

    it('the model box and the overview on a real model\'s capture; the overview\'s numbers the same in English', async () => {
      const { page, errors } = await openLab(browser.context, server.url, { hash: 'src=model&lang=zh' });
      try {
        let r = await inspect(page, ['#model-box']);
        expect(r.left).toEqual([]);
        // the browser writes a file input's button in its own language: the page's label stands for it
        const picker = () => page.evaluate(() => ({ input: getComputedStyle(document.querySelector('#model-files')).opacity,
          button: document.querySelector('#model-box label.file-button[for="model-files"]')?.textContent, chosen: document.querySelector('[data-files="model-files"]')?.textContent }));
        expect(await picker()).toEqual({ input: '0', button: '选择文件', chosen: '未选择文件' });
        await page.setInputFiles('#model-files', [files.tok, files.model]);
        expect((await picker()).chosen).toBe('2 个文件');
        await page.waitForFunction(() => !document.querySelector('#model-text').disabled && !document.querySelector('#model-text').hidden, null, { timeout: 60000 });
        await page.evaluate(() => window.attnviz.snapshot());
        await page.click('#overview > summary');
        const zh = await page.evaluate(() => window.attnviz.overview());
        expect(zh.open && zh.done).toBe(true);
        r = await inspect(page, ['#model-box', '#overview']);
        expect(r.left).toEqual([]);
        expect(r.clipped).toEqual([]);
        expect(r.sideways).toBeLessThanOrEqual(0);
        expect((await fontReport(page, { root: '#overview' })).missing).toEqual([]);
        await page.locator('#overview').screenshot({ path: `build/e2e/i18n-panels-overview-${size.width}.png` });
        await page.locator('#model-box').screenshot({ path: `build/e2e/i18n-panels-model-${size.width}.png` });
        await switchTo(page, 'en');
        expect(await page.evaluate(() => window.attnviz.overview())).toEqual(zh);
        expect((await inspect(page, ['#overview'])).left.length).toBeGreaterThan(0);
        expect(errors).toEqual([]);
      } finally { await page.close(); }
    }, 180000);

    it('the own-input box: its label, its hint, what it loaded', async () => {
      const { page, errors } = await openLab(browser.context, server.url, { hash: 'src=file&lang=zh' });
      try {
        expect((await inspect(page, ['#qkv-box'])).left).toEqual([]);
        const rows = (n, d, s) => Array.from({ length: n }, (_, i) => Array.from({ length: d }, (_, j) => Math.sin(s + i * d + j)));
        const file = join(mkdtempSync(join(tmpdir(), 'attnviz-e2e-qkv-')), 'mine.json');
        writeFileSync(file, JSON.stringify({ q: rows(12, 4, 1), k: rows(12, 4, 2), v: rows(12, 4, 3) }));
        await page.setInputFiles('#qkv-files', [file]);
        await page.waitForFunction(() => /n = 12/.test(document.querySelector('#qkv-status').textContent));
        const r = await inspect(page, ['#qkv-box']);
        expect(r.left).toEqual([]);
        expect(r.clipped).toEqual([]);
        expect(await page.textContent('#qkv-status')).toBe('mine.json：n = 12，d = 4');
        expect(await page.textContent('label.file-button[for="qkv-files"]')).toBe('选择文件');
        expect(await page.textContent('[data-files="qkv-files"]')).toBe('mine.json');
        expect(errors).toEqual([]);
      } finally { await page.close(); }
    }, 120000);
  });
}
