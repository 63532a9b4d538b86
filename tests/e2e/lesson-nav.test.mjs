// Moving between lessons (web/ui/lessons.mjs, docs/lessons.md) in Debian's headless Chromium: every way of
// changing lessons (next, previous, reset, a menu entry, a lesson link, the presenter keys) keeps the
// reader's modes: projector mode stays on, in the link and in the text size, and the theme stays. The
// lesson shows its place in the course ("3 / 23", from PRESETS' order) and ←/→, PageUp/PageDown step
// lessons unless a control (a slider, a picker, a field) has focus. Screenshots: build/e2e/nav-*.png.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { serve } from '../../scripts/serve.mjs';
import { launch, openLab, waitSettled } from './browser.mjs';
import { PRESETS } from '../../web/state/presets.mjs';

const ROOT = 'build/web';
let server, browser, page, errors;

beforeAll(async () => {
  if (!existsSync(`${ROOT}/index.html`) || !existsSync(`${ROOT}/attnviz.wasm`)) throw new Error('run `make web` first');
  await mkdir('build/e2e', { recursive: true });
  server = await serve(ROOT, 0);
  browser = await launch({ width: 1920, height: 1080 });
  ({ page, errors } = await openLab(browser.context, server.url, { hash: 'preset=first-look&projector=1' }));
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** After a lesson change: which lesson, the address bar, the modes on the page and the caption's size. */
async function shown() {
  await page.evaluate(() => window.attnviz.snapshot());
  await waitSettled(page);
  return page.evaluate(() => ({
    lesson: new URLSearchParams(location.hash.slice(1)).get('preset'),
    projectorKey: new URLSearchParams(location.hash.slice(1)).get('projector'),
    projector: 'projector' in document.documentElement.dataset,
    theme: document.documentElement.dataset.theme,
    captionPx: parseFloat(getComputedStyle(document.querySelector('#lesson .lesson-caption')).fontSize),
    num: document.querySelector('#lesson .lesson-num')?.textContent ?? null,
    title: document.querySelector('#lesson .lesson-title').textContent,
  }));
}
const nameAt = (i) => PRESETS[(i + PRESETS.length) % PRESETS.length].name;
const indexOf = (name) => PRESETS.findIndex((p) => p.name === name);

/** Projector mode on, as the page shows it and as the link says it. */
function expectProjector(s, how) {
  expect(s.projectorKey, `${how}: the link`).toBe('1');
  expect(s.projector, `${how}: the page`).toBe(true);
  expect(s.captionPx, `${how}: the caption's size`).toBeGreaterThanOrEqual(18);
}

describe('changing lessons keeps the reader\'s modes', () => {
  it('projector mode and the theme survive next, reset, a menu entry and a lesson link', async () => {
    let s = await shown();
    expect(s.lesson).toBe('first-look');
    expectProjector(s, 'opened');
    await page.click('#theme'); // auto → dark
    s = await shown();
    expect(s.theme).toBe('dark');

    await page.click('#lesson .lesson-next');
    s = await shown();
    expect(s.lesson).toBe(nameAt(1));
    expectProjector(s, 'next');

    await page.click('#lesson .lesson-reset');
    s = await shown();
    expect(s.lesson).toBe(nameAt(1));
    expectProjector(s, 'reset');

    await page.click('#lessons > summary');
    await page.click('#lessons a[data-preset="sink"]');
    s = await shown();
    expect(s.lesson).toBe('sink');
    expectProjector(s, 'the menu');
    // every lesson link on the page carries the mode, so a new tab opens in it too
    const hrefs = await page.$$eval('#lessons a, #lesson .lesson-links a', (as) => as.map((a) => a.getAttribute('href')));
    for (const h of hrefs) expect(h, h).toMatch(/^#preset=[^&]+&projector=1$/);

    // a link naming only the lesson (pasted, or from slides) keeps the mode too
    await page.evaluate(() => { location.hash = 'preset=rank-le-d'; });
    s = await shown();
    expect(s.lesson).toBe('rank-le-d');
    expectProjector(s, 'a lesson link');
    expect(s.theme).toBe('dark');

    // a link that names the mode still sets it
    await page.evaluate(() => { location.hash = 'preset=crossover&projector=0'; });
    s = await shown();
    expect([s.lesson, s.projector]).toEqual(['crossover', false]);
    expect(await page.$$eval('#lessons a', (as) => as.map((a) => a.getAttribute('href')))).toEqual(PRESETS.map((p) => `#preset=${p.name}`));
    await page.click('#projector');
    await shown();
    expect(errors).toEqual([]);
  });
});

describe('the course: numbers, previous and next, presenter keys', () => {
  it('each lesson shows its place in the course, and previous and next step by PRESETS\' order', async () => {
    await page.evaluate(() => { location.hash = 'preset=first-look&projector=1'; });
    let s = await shown();
    expect(s.num).toBe(`1 / ${PRESETS.length}`);
    for (let i = 1; i <= 2; i++) {
      await page.click('#lesson .lesson-next');
      s = await shown();
      expect([s.lesson, s.num]).toEqual([nameAt(i), `${i + 1} / ${PRESETS.length}`]);
    }
    await page.click('#lesson .lesson-prev');
    s = await shown();
    expect([s.lesson, s.num]).toEqual([nameAt(1), `2 / ${PRESETS.length}`]);
    expectProjector(s, 'previous');
    expect(await page.$eval('#lesson .lesson-prev', (a) => a.textContent)).toContain(PRESETS[0].title);
    // from the first lesson, previous wraps to the last
    await page.click('#lesson .lesson-prev');
    await page.click('#lesson .lesson-prev');
    s = await shown();
    expect([s.lesson, s.num]).toEqual([nameAt(-1), `${PRESETS.length} / ${PRESETS.length}`]);
    await page.screenshot({ path: 'build/e2e/nav-last-1920-projector.png' });
    expect(errors).toEqual([]);
  });

  it('→, PageDown, ←, PageUp step lessons when no control has focus, never from a slider or a picker', async () => {
    await page.evaluate(() => { location.hash = 'preset=rank-le-d&projector=1'; });
    let s = await shown();
    const i = indexOf('rank-le-d');
    await page.evaluate(() => document.activeElement?.blur());
    await page.keyboard.press('ArrowRight');
    s = await shown();
    expect(s.lesson).toBe(nameAt(i + 1));
    await page.keyboard.press('PageDown');
    s = await shown();
    expect(s.lesson).toBe(nameAt(i + 2));
    await page.keyboard.press('PageUp');
    s = await shown();
    expect(s.lesson).toBe(nameAt(i + 1));
    await page.keyboard.press('ArrowLeft');
    s = await shown();
    expect(s.lesson).toBe(nameAt(i));
    expectProjector(s, 'the keys');
    // after clicking "next" (a link has focus) the clicker keeps working
    await page.click('#lesson .lesson-next');
    await shown();
    await page.keyboard.press('ArrowRight');
    s = await shown();
    expect(s.lesson).toBe(nameAt(i + 2));

    // a slider with focus takes the arrows: it moves, the lesson stays
    await page.evaluate(() => { location.hash = 'preset=rank-le-d&projector=1'; });
    await shown();
    const slider = await page.$eval('#ctl-input input[type=range]', (e) => e.id);
    const before = await page.$eval(`#${slider}`, (e) => e.value);
    await page.focus(`#${slider}`);
    await page.keyboard.press('ArrowRight');
    s = await shown();
    expect(s.lesson).toBe('rank-le-d');
    expect(await page.$eval(`#${slider}`, (e) => e.value)).not.toBe(before);
    await page.keyboard.press('PageUp');
    s = await shown();
    expect(s.lesson).toBe('rank-le-d');
    // and so does a picker
    await page.focus('#ctl-variant select');
    await page.keyboard.press('ArrowLeft');
    s = await shown();
    expect(s.lesson).toBe('rank-le-d');
    expect(errors).toEqual([]);
  });
});
