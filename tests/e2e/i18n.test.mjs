// i18n.test.mjs: the page in Chinese (docs/i18n.md) in Debian's headless Chromium at 1024×768. lang=zh
// sets <html lang="zh-CN">; the header, the control panel's headings and the controls' labels read
// Chinese; every character drawn has a glyph (a CJK font is installed: fonts-wqy-microhei); the header's
// control switches back to English and to Chinese again; the language survives "next" in a lesson; and
// the snapshot is the same in both languages; at 1920×1080 in projector mode and on a 390×844 phone the
// header's and the controls' Chinese words are not clipped and the page does not scroll sideways.
// Screenshots: build/e2e/i18n-*.png.
import { describe, it, expect } from 'vitest';
import { servedLab } from './suite.mjs';
import { launch, openLab, waitSettled, fontReport } from './browser.mjs';
import { CATALOGUES } from '../../web/i18n/i18n.mjs';

const CJK = /[\u3400-\u9fff]/;
const lab = servedLab();

/** The words of the header and the control panel as the reader sees them. */
function words(page) {
  return page.evaluate(() => {
    const text = (sel) => document.querySelector(sel)?.textContent.trim() ?? null;
    const shown = (el) => el.getClientRects().length > 0;
    return {
      lang: document.documentElement.lang,
      title: document.title,
      lessons: text('#lessons > summary'),
      tagline: text('.tagline'),
      share: text('#share'),
      button: text('#lang'),
      buttonLang: document.getElementById('lang').lang,
      headings: ['#h-input', '#h-variant', '#h-readout'].map(text),
      labels: [...document.querySelectorAll('.controls .ctl label')].filter(shown).map((l) => l.textContent.trim()),
      status: text('#status'),
      note: text('#causal-note'),
      readouts: [...document.querySelectorAll('#readout-table td.l > span:first-child')].map((s) => s.textContent.trim()),
      hash: location.hash,
    };
  });
}

describe('the page in Chinese', () => {
  it('lang=zh: <html lang>, the header and the controls read Chinese, every glyph drawn', async () => {
    const { page, errors } = await openLab(lab.browser.context, lab.server.url, { hash: 'v=1&variant=focused&p=3&n=64&causal=1&dwc=1&lang=zh' });
    const w = await words(page);
    expect(w.lang).toBe('zh-CN');
    expect(w.title).toBe(CATALOGUES.zh['page.title']);
    expect([w.lessons, w.tagline, w.share, ...w.headings]).toEqual([CATALOGUES.zh['header.lessons'], CATALOGUES.zh['header.tagline'],
      CATALOGUES.zh['header.share'], CATALOGUES.zh['section.input'], CATALOGUES.zh['section.variant'], CATALOGUES.zh['section.readouts']]);
    expect(w.button).toBe('English');
    expect(w.buttonLang).toBe('en');
    expect(w.labels.length).toBeGreaterThan(5);
    expect(w.labels.filter((l) => !CJK.test(l))).toEqual([]);
    expect(w.readouts.length).toBeGreaterThan(5);
    expect(w.readouts.filter((l) => !CJK.test(l) && !/^KL/.test(l))).toEqual([]);
    expect(w.status).toMatch(/^n = 64：矩阵 /);
    expect(w.note).toMatch(/^FLatten（聚焦线性注意力） \+ DWC（V 上的深度卷积） 没有因果形式/);
    await page.screenshot({ path: 'build/e2e/i18n-zh-1024.png', fullPage: true });
    const glyphs = await fontReport(page);
    expect(glyphs.missing).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('the header\'s control switches to English and back, in the link too', async () => {
    const { page, errors } = await openLab(lab.browser.context, lab.server.url, { hash: 'v=1&n=64&lang=zh' });
    await page.click('#lang');
    await waitSettled(page);
    let w = await words(page);
    expect(w.lang).toBe('en');
    expect(w.button).toBe('中文');
    expect(w.buttonLang).toBe('zh');
    expect(w.lessons).toBe('Lessons');
    expect(w.labels.filter((l) => CJK.test(l))).toEqual([]);
    expect(w.hash).not.toMatch(/lang=/);
    await page.click('#lang');
    await waitSettled(page);
    w = await words(page);
    expect(w.lang).toBe('zh-CN');
    expect(w.lessons).toBe('课程');
    expect(w.hash).toMatch(/[#&]lang=zh(&|$)/);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('keeps the language when a lesson\'s "next" is followed', async () => {
    const { page, errors } = await openLab(lab.browser.context, lab.server.url, { hash: 'preset=first-look&lang=zh' });
    expect(await page.$eval('#lesson .lesson-next', (a) => a.getAttribute('href'))).toMatch(/&lang=zh$/);
    expect(await page.$eval('#lesson .lesson-chapter-name', (s) => s.textContent)).toMatch(/^第 1 章/);
    await page.click('#lesson .lesson-next');
    await page.waitForFunction(() => new URLSearchParams(location.hash.slice(1)).get('preset') !== 'first-look');
    await page.evaluate(() => window.attnviz.snapshot());
    await waitSettled(page);
    const w = await words(page);
    expect(w.lang).toBe('zh-CN');
    expect(w.hash).toMatch(/[#&]lang=zh(&|$)/);
    expect(await page.$eval('#lesson .lesson-src > span', (s) => s.textContent)).toBe('出处：');
    await page.screenshot({ path: 'build/e2e/i18n-zh-lesson.png' });
    expect(errors).toEqual([]);
    await page.close();
  });

  it('says so in Chinese when the module cannot load (the words come before the module)', async () => {
    const page = await lab.browser.context.newPage();
    await page.route('**/*.wasm', (r) => r.abort());
    await page.goto(`${lab.server.url}#v=1&lang=zh`);
    await page.waitForFunction(() => document.getElementById('status').textContent === 'WebAssembly 模块没有加载成功', null, { timeout: 30000 });
    expect(await page.evaluate(() => document.documentElement.lang)).toBe('zh-CN');
    expect(await page.textContent('#notice')).toMatch(/^无法加载 WebAssembly 模块：/);
    expect(await page.textContent('#lessons > summary')).toBe('课程');
    await page.close();
  });

  it('gives the same snapshot in both languages', async () => {
    const hash = 'v=1&variant=performer&m=16&n=64&d=16&seed=3';
    const snap = async (h) => {
      const { page } = await openLab(lab.browser.context, lab.server.url, { hash: h });
      const s = await page.evaluate(() => window.attnviz.snapshot());
      await page.close();
      return s;
    };
    const en = await snap(hash), zh = await snap(`${hash}&lang=zh`);
    expect(Object.keys(en.state)).not.toContain('lang');
    expect(zh).toEqual(en);
  });

  // Chinese words are wider or narrower than the English they replace: nothing the header or the control
  // panel labels may be cut off, at a projector's size and on a phone
  for (const [name, size, hash] of [['projector', { width: 1920, height: 1080 }, 'v=1&n=64&projector=1&lang=zh'],
    ['phone', { width: 390, height: 844, deviceScaleFactor: 2, hasTouch: true }, 'v=1&n=64&lang=zh']]) {
    it(`at ${size.width}×${size.height} (${name}): no clipped header or control label, no sideways scrolling`, async () => {
      const b = await launch(size);
      try {
        const { page, errors } = await openLab(b.context, lab.server.url, { hash });
        const r = await page.evaluate(() => {
          const shown = (el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';
          const els = [...document.querySelectorAll('header.top > *, header.top summary, .controls h2, .controls .ctl label, #lesson .lesson-head h2')].filter(shown);
          return {
            lang: document.documentElement.lang,
            clipped: els.filter((el) => el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX !== 'visible').map((el) => el.textContent.trim()),
            sideways: document.documentElement.scrollWidth - document.documentElement.clientWidth,
          };
        });
        expect(r.lang).toBe('zh-CN');
        expect(r.clipped).toEqual([]);
        expect(r.sideways).toBeLessThanOrEqual(0);
        await page.screenshot({ path: `build/e2e/i18n-zh-${name}.png` });
        expect((await fontReport(page)).missing).toEqual([]);
        expect(errors).toEqual([]);
      } finally { await b.close(); }
    });
  }
});
