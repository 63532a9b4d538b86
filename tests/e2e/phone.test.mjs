// The heatmaps on a phone (390×844, a touch screen) in Debian's headless Chromium: each as wide as the
// window allows (they were 120 px with 60 % of the width empty) and the first entirely on the first
// screen, after the open lesson's caption and before the controls (they started at y = 833), with no
// sideways scrolling. Screenshots: build/e2e/phone-*.png.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { serve } from '../../scripts/serve.mjs';
import { launch, openLab } from './browser.mjs';

const ROOT = 'build/web';
const W = 390, H = 844;
let server, browser;

beforeAll(async () => {
  if (!existsSync(`${ROOT}/index.html`) || !existsSync(`${ROOT}/attnviz.wasm`)) throw new Error('run `make web` first');
  await mkdir('build/e2e', { recursive: true });
  server = await serve(ROOT, 0);
  browser = await launch({ width: W, height: H, hasTouch: true });
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** Where the heatmaps, their colour bars, the lesson and the controls are (page coordinates). */
const boxes = (page) => page.evaluate(() => {
  const at = (el) => { const b = el.getBoundingClientRect(); return { left: b.left, right: b.right, top: b.top + scrollY, bottom: b.bottom + scrollY, width: b.width }; };
  return {
    hm: ['hm-M', 'hm-A', 'hm-D'].map((id) => at(document.getElementById(id))),
    bars: [...document.querySelectorAll('.heat .cbar')].map(at),
    // the caption (an open lesson's panel may be laid out as its parts, display: contents, with no box)
    lesson: document.getElementById('lesson').hidden ? null : at(document.querySelector('#lesson .lesson-caption')),
    input: at(document.getElementById('ctl-input')),
    scrollWidth: document.documentElement.scrollWidth,
  };
});

describe('the heatmaps on a phone (390×844)', () => {
  for (const [name, hash] of [['lesson', 'preset=first-look'], ['no-lesson', 'v=1&variant=elu']]) {
    it(`use the width and come on the first screen (${name})`, async () => {
      const { page, errors } = await openLab(browser.context, server.url, { hash });
      await page.evaluate(() => window.attnviz.snapshot());
      await page.screenshot({ path: `build/e2e/phone-${name}.png`, fullPage: true });
      const b = await boxes(page);
      for (const [i, hm] of b.hm.entries()) {
        expect(hm.width, `heatmap ${i}`).toBeGreaterThanOrEqual(0.6 * W);
        // the heatmap and its colour bar span most of the window: no wide empty margin beside them
        expect(b.bars[i].right - hm.left, `heatmap ${i} with its bar`).toBeGreaterThanOrEqual(0.85 * W);
        expect(b.bars[i].right, `heatmap ${i}'s bar`).toBeLessThanOrEqual(W);
      }
      expect(b.hm[0].bottom).toBeLessThanOrEqual(H); // the first heatmap whole on the first screen
      if (b.lesson) expect(b.lesson.bottom).toBeLessThanOrEqual(b.hm[0].top); // the caption first
      expect(b.hm[0].top).toBeLessThan(b.input.top); // then the controls
      expect(b.scrollWidth).toBeLessThanOrEqual(W);
      expect(errors).toEqual([]);
      await page.close();
    });
  }
});

// the mechanism tabs scroll sideways in a lesson's stage on a phone: the lesson's view was chosen
// but its tab sat past the row's right edge, unseen (hedgehog-distill, in Chinese's wider words too)
describe('the mechanism tabs on a phone', () => {
  for (const hash of ['preset=hedgehog-distill', 'preset=hedgehog-distill&lang=zh', 'preset=memory-collisions']) {
    it(`show the chosen view's tab (${hash})`, async () => {
      const { page, errors } = await openLab(browser.context, server.url, { hash });
      await page.evaluate(() => window.attnviz.snapshot());
      const r = await page.evaluate(() => {
        const tab = document.querySelector('.mech-tabs [aria-selected="true"]'), row = tab.parentElement;
        const t = tab.getBoundingClientRect(), p = row.getBoundingClientRect();
        return { left: t.left - p.left, right: p.right - t.right, scrolls: row.scrollWidth > row.clientWidth };
      });
      expect(r.left, JSON.stringify(r)).toBeGreaterThanOrEqual(-1);
      expect(r.right, JSON.stringify(r)).toBeGreaterThanOrEqual(-1);
      expect(errors).toEqual([]);
      await page.close();
    });
  }
});

// the gated stepper on a phone: the state, its gate column and the sentences fit the width (no sideways scroll)
describe('the gated stepper on a phone', () => {
  for (const lang of ['en', 'zh']) {
    it(`kda at a reset, ${lang}: nothing past the window's right edge`, async () => {
      const { page, errors } = await openLab(browser.context, server.url, { hash: `v=1&variant=kda&n=64&d=16&gate=resets&gate_period=0&gate_rate=0&gate_at=20&mech=stepper&step=21&lang=${lang}` });
      try {
        await expect.poll(() => page.evaluate(() => window.attnviz.mechanisms().stepper?.reset), { timeout: 30000 }).toBe(true);
        await page.locator('#mech-stepper .mech-gated').scrollIntoViewIfNeeded();
        const r = await page.evaluate(() => {
          const right = (sel) => Math.max(...[...document.querySelectorAll(sel)].map((e) => e.getBoundingClientRect().right));
          return { scroll: document.documentElement.scrollWidth, width: innerWidth, state: right('#mech-stepper .mech-grid'), alpha: right('#mech-stepper .mech-alpha'), words: right('#mech-stepper .mech-gated') };
        });
        expect(r.scroll, JSON.stringify(r)).toBeLessThanOrEqual(r.width);
        for (const k of ['state', 'alpha', 'words']) expect(r[k], JSON.stringify(r)).toBeLessThanOrEqual(r.width);
        await page.screenshot({ path: `build/e2e/phone-gated-stepper-${lang}.png` });
        expect(errors).toEqual([]);
      } finally { await page.close(); }
    });
  }
});
