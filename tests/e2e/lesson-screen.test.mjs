// The evidence on the first screen (issue 30, Deliver 2), in Debian's headless Chromium: every lesson, at
// 1024×768, at 1366×768 (the one-screen layout), at 1920×1080 in projector mode and on a phone (390×844), opened the way a reader steps through
// the course (one page per screen, the next lesson's link), shows its caption and every element the
// lesson outlines (class `hl`) on the screen it lands on: inside the window's width, at least 60 % of its
// height visible. What carries `hl`: the panels the lesson names (heatmaps, spectrum, error, entropy, sweep,
// the mechanism view: the figures themselves) and, for the readout rows and the cost line it names, their
// stand-ins in the lesson's evidence strip (the table's rows are outlined too, as `cited`, further down).
// Screenshots of each first screen: build/e2e/lesson-screen-VIEW-LESSON.png.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { serve } from '../../scripts/serve.mjs';
import { launch, openLab, waitSettled } from './browser.mjs';
import { PRESETS } from '../../web/state/presets.mjs';

const ROOT = 'build/web';
const SCREENS = [
  { name: 'laptop', width: 1024, height: 768, mode: '' },
  { name: 'wide', width: 1366, height: 768, mode: '' }, // the one-screen layout: the mechanism views come below it
  { name: 'projector', width: 1920, height: 1080, mode: '&projector=1' },
  { name: 'phone', width: 390, height: 844, mode: '', touch: true },
];
// On a phone the three heatmaps, one under the other, fill the screen under the caption: a lesson that
// cites them and the single-row view shows the row view right after them, on the second screen.
const SECOND_SCREEN = { phone: { 'first-look': ['row'], sink: ['row'] } };
let server;

beforeAll(async () => {
  if (!existsSync(`${ROOT}/index.html`) || !existsSync(`${ROOT}/attnviz.wasm`)) throw new Error('run `make web` first');
  await mkdir('build/e2e', { recursive: true });
  server = await serve(ROOT, 0);
});

afterAll(async () => { await server?.close(); });

/** The mechanism view a lesson opens has drawn once (its size is then final). */
async function mechDrawn(page, view) {
  const ready = { stepper: (m) => m.stepper?.t >= 0, scaling: (m) => m.scaling.done, recall: (m) => m.recall.done, distill: (m) => m.distill.t > 0 || m.distill.error };
  for (const t0 = Date.now(); ;) {
    const m = await page.evaluate(() => window.attnviz.mechanisms());
    if (m?.open === view && ready[view](m)) return;
    if (Date.now() - t0 > 90000) throw new Error(`the ${view} view did not draw`);
    await page.waitForTimeout(100);
  }
}

/** What of the caption and of each outlined element is on the screen; the ones that are not, as sentences. */
const offScreen = (page, later = []) => page.evaluate((later) => {
  const W = innerWidth, H = innerHeight, bad = [];
  const name = (e) => e.dataset.readout ?? e.dataset.hl ?? e.className;
  const check = (e, what) => {
    const b = e.getBoundingClientRect();
    const seen = Math.min(b.bottom, H) - Math.max(b.top, 0);
    if (!(b.height > 0) || seen < 0.6 * b.height - 0.5 || b.left < -1 || b.right > W + 1) {
      bad.push(`${what} at x ${Math.round(b.left)}–${Math.round(b.right)}, y ${Math.round(b.top)}–${Math.round(b.bottom)}`);
    }
  };
  check(document.querySelector('#lesson .lesson-caption'), 'the caption');
  const hl = [...document.querySelectorAll('.hl')];
  if (!hl.length) bad.push('nothing outlined');
  for (const e of hl) if (!later.includes(name(e))) check(e, `"${name(e)}"`);
  return bad;
}, later);

describe('a lesson shows its evidence on the first screen', () => {
  for (const screen of SCREENS) {
    it(`at ${screen.width}×${screen.height}${screen.mode ? ' in projector mode' : ''}`, async () => {
      const browser = await launch({ width: screen.width, height: screen.height, hasTouch: !!screen.touch });
      try {
        const { page, errors } = await openLab(browser.context, server.url, { hash: `preset=${PRESETS[0].name}${screen.mode}` });
        const failed = [];
        for (const p of PRESETS) {
          // the next lesson's link, as the lesson panel's "next" gives it (the reader's modes kept)
          const href = await page.evaluate((name) => document.querySelector(`.lesson-list a[data-preset="${name}"]`).getAttribute('href'), p.name);
          await page.evaluate((h) => { location.hash = h; }, href);
          await page.evaluate(() => window.attnviz.snapshot());
          await waitSettled(page);
          if (p.state.mech) await mechDrawn(page, p.state.mech);
          await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
          if (screen.mode) expect(await page.evaluate(() => document.documentElement.hasAttribute('data-projector')), p.name).toBe(true);
          await page.screenshot({ path: `build/e2e/lesson-screen-${screen.name}-${p.name}.png` });
          const bad = await offScreen(page, SECOND_SCREEN[screen.name]?.[p.name]);
          if (bad.length) failed.push(`${p.name}: ${bad.join('; ')}`);
        }
        expect(failed, `${failed.length} of ${PRESETS.length} lessons`).toEqual([]);
        expect(errors).toEqual([]);
      } finally {
        await browser.close();
      }
    });
  }
});

describe("the evidence strip says the table's values, and the other state's", () => {
  it('focused-p (plain readouts) and rank-le-d (the spectrum\'s rank) at 1024×768', async () => {
    const browser = await launch({ width: 1024, height: 768 });
    try {
      const { page, errors } = await openLab(browser.context, server.url, { hash: 'preset=focused-p' });
      const strip = () => page.evaluate(() => [...document.querySelectorAll('.lesson-evidence li[data-readout]')].map((li) => ({
        key: li.dataset.readout, value: li.querySelector('.ev-value').textContent, other: li.querySelector('.ev-compare').textContent })));
      const table = (key) => page.$eval(`#readout-table tr[data-readout="${key}"] td.v`, (td) => td.textContent);
      for (const [name, compare] of [['focused-p', '&p=1'], ['rank-le-d', '&variant=softmax']]) {
        await page.evaluate((h) => { location.hash = h; }, `preset=${name}`);
        await page.evaluate(() => window.attnviz.snapshot());
        await waitSettled(page);
        await page.waitForFunction(() => [...document.querySelectorAll('.lesson-evidence .ev-compare')].every((e) => e.textContent), null, { timeout: 30000 });
        const shown = await strip();
        expect(shown.length, name).toBeGreaterThan(0);
        for (const s of shown) expect(s.value, `${name}: ${s.key}`).toBe(await table(s.key));
        // the other state, opened as a link: its table says what the strip's comparison said
        await page.evaluate((h) => { location.hash = h; }, `preset=${name}${compare}`);
        await page.evaluate(() => window.attnviz.snapshot());
        await waitSettled(page);
        const label = compare === '&p=1' ? 'p = 1' : 'softmax';
        for (const s of shown) expect(s.other, `${name}: ${s.key}`).toBe(` — ${label}: ${await table(s.key)}`);
      }
      expect(errors).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
