// Accessibility (issue 10, item 4) in Debian's headless Chromium: axe-core finds no serious or critical
// violation on the page (light and dark, a lesson open, the Lessons menu open, projector mode, a phone);
// every control has a label and is reached by Tab; a focused heatmap's cell cursor moves with the arrow
// keys and announces its row, column and values; the heatmaps' colour map is the reader's choice; the
// spectrum's curves differ by dash and marker, not colour alone; a 390×844 phone gets one column and no
// sideways scrolling. Screenshots: build/e2e/a11y-*.png.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { serve } from '../../scripts/serve.mjs';
import { launch, openLab, canvasColours, fontReport } from './browser.mjs';
import { SERIES } from '../../web/render/charts.mjs';

const ROOT = 'build/web';
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
let server, browser;

beforeAll(async () => {
  if (!existsSync(`${ROOT}/index.html`)) throw new Error('run `make web` first');
  await mkdir('build/e2e', { recursive: true });
  server = await serve(ROOT, 0);
  browser = await launch({ width: 1280, height: 800 });
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** axe-core's serious and critical violations on the page as it is now (rule id: the first targets). */
async function axeProblems(page, within = null) {
  // evaluated through the DevTools protocol: not an inline script, so the page's CSP does not apply
  await page.evaluate(AXE);
  const result = await page.evaluate((w) => window.axe.run(w ? { include: w } : document, { resultTypes: ['violations'] }), within);
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(' | ')}`);
}

describe('accessibility', () => {
  it('axe-core finds no serious or critical violation, light and dark, with a lesson and the menu open', async () => {
    const { page, errors } = await openLab(browser.context, server.url, { hash: 'preset=rank-le-d' });
    expect(await axeProblems(page)).toEqual([]);
    await page.click('#lessons summary');
    expect(await axeProblems(page)).toEqual([]);
    await page.keyboard.press('Escape');
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.evaluate(() => window.attnviz.snapshot());
    expect(await page.evaluate(() => matchMedia('(prefers-color-scheme: dark)').matches)).toBe(true);
    expect(await axeProblems(page)).toEqual([]);
    await page.emulateMedia({ colorScheme: 'light' });
    await page.evaluate(() => { location.hash = 'preset=performer-m&projector=1'; });
    await page.evaluate(() => window.attnviz.snapshot());
    expect(await axeProblems(page)).toEqual([]);
    // a gated family: the gate strip and its controls (a per-channel gate, η, resets)
    await page.evaluate(() => { location.hash = 'v=1&variant=kda&n=128&d=16&gate=resets&gate_at=30&beta_gen=uniform'; });
    await page.evaluate(() => window.attnviz.snapshot());
    expect(await page.$eval('#gate-strip', (e) => e.hidden)).toBe(false);
    expect(await axeProblems(page, [['#gate-strip'], ['#ctl-variant']])).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('every control is labelled and reached by Tab', async () => {
    const { page } = await openLab(browser.context, server.url, { hash: 'v=1&variant=focused&dwc=1' });
    const controls = await page.$$eval('.controls input, .controls select, .controls button', (els) => els
      .filter((e) => e.getClientRects().length)
      .map((e) => ({ id: e.id, label: (e.labels?.[0]?.textContent ?? e.getAttribute('aria-label') ?? e.title ?? '').trim() })));
    expect(controls.length).toBeGreaterThan(10);
    for (const c of controls) expect(c.label.length, c.id).toBeGreaterThan(0);
    const reached = new Set();
    await page.focus('#lessons summary');
    for (let i = 0; i < 80; i++) {
      await page.keyboard.press('Tab');
      const id = await page.evaluate(() => document.activeElement?.id);
      if (id) reached.add(id);
    }
    for (const c of controls) if (c.id) expect(reached.has(c.id), c.id).toBe(true);
    for (const id of ['hm-M', 'hm-A', 'hm-D']) expect(reached.has(id), id).toBe(true);
    await page.close();
  });

  it('a focused heatmap has a cell cursor: arrow keys move it and it says where it is and what is there', async () => {
    const { page } = await openLab(browser.context, server.url, { hash: 'v=1&variant=elu&n=64' });
    await page.focus('#hm-M');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowDown');
    const said = await page.$eval('#cell-say', (e) => e.textContent);
    expect(said).toMatch(/^row 1, col 2: M [0-9.e-]+ · softmax [0-9.e-]+ · M − A/);
    const box = await page.$eval('#hm-M + .cell-cursor', (e) => ({ hidden: e.hidden, w: e.getBoundingClientRect().width }));
    const side = await page.$eval('#hm-M', (e) => e.getBoundingClientRect().width);
    expect(box.hidden).toBe(false);
    expect(box.w).toBeCloseTo(side / 64, 0);
    await page.keyboard.press('End');
    expect(await page.$eval('#cell-say', (e) => e.textContent)).toMatch(/^row 1, col 63:/);
    await page.keyboard.press('Tab');
    expect(await page.$eval('#hm-M + .cell-cursor', (e) => e.hidden)).toBe(true);
    await page.close();
  });

  it("the heatmaps' colour map is the reader's pick, and the curves differ by more than colour", async () => {
    const { page } = await openLab(browser.context, server.url, { hash: 'v=1&variant=focused&n=64' });
    const top = async () => page.$eval('#cb-M', (c) => [...c.getContext('2d').getImageData(0, 0, 1, 1).data.slice(0, 3)]);
    expect(await top()).toEqual([0xfd, 0xe7, 0x25]); // viridis' top
    await page.selectOption('#k-cmap', 'cividis');
    await page.evaluate(() => window.attnviz.snapshot());
    expect(await top()).toEqual([0xfe, 0xe8, 0x38]); // cividis' top
    expect((await canvasColours(page, 'hm-M')).colours).toBeGreaterThan(20);
    expect(page.url()).toMatch(/cmap=cividis/);
    // four curves, four dash patterns, four marker shapes, named in the legend
    expect(new Set(SERIES.map((s) => JSON.stringify(s.dash))).size).toBe(4);
    expect(new Set(SERIES.map((s) => s.marker)).size).toBe(4);
    const legend = await page.$$eval('#chart-spectrum .u-legend .u-series th', (th) => th.map((t) => t.textContent.trim()).filter(Boolean));
    expect(legend).toEqual(SERIES.map((s) => s.label));
    await page.close();
  });

  it('a phone (390×844) gets one column, no sideways scrolling, and no serious violation', async () => {
    const phone = await launch({ width: 390, height: 844, deviceScaleFactor: 2 });
    const { page, errors } = await openLab(phone.context, server.url, { hash: 'preset=focused-p' });
    const m = await page.evaluate(() => ({
      scroll: document.documentElement.scrollWidth, vw: innerWidth,
      charts: [...document.querySelectorAll('.chart')].filter((c) => c.checkVisibility()).map((c) => c.getBoundingClientRect().width),
      hm: document.getElementById('hm-M').getBoundingClientRect().width,
    }));
    expect(m.scroll).toBeLessThanOrEqual(m.vw);
    for (const w of m.charts) expect(w).toBeGreaterThan(250);
    expect(m.hm).toBeGreaterThan(100);
    expect(await axeProblems(page)).toEqual([]);
    await page.screenshot({ path: 'build/e2e/a11y-phone-390x844.png' });
    await page.screenshot({ path: 'build/e2e/a11y-phone-390x844-full.png', fullPage: true });
    expect(errors).toEqual([]);
    await phone.close();
  });
});

describe('explanations', () => {
  it('open from the keyboard and by a tap, show the formula and the text, and close with Escape', async () => {
    const { page, errors } = await openLab(browser.context, server.url, { hash: 'v=1&variant=performer&n=64' });
    await page.focus('tr[data-readout="row_kl_mean"] button.info');
    await page.keyboard.press('Enter');
    const shown = () => page.$eval('#explain', (e) => ({ hidden: e.hidden, title: e.querySelector('.explain-title').textContent, text: e.querySelector('.explain-body').textContent, math: !!e.querySelector('math'), focus: document.activeElement?.className }));
    await page.waitForFunction(() => !!document.querySelector('#explain math'));
    let s = await shown();
    expect(s.hidden).toBe(false);
    expect(s.title).toBe('KL(softmax ‖ variant)');
    expect(s.text).toMatch(/Kullback–Leibler/);
    expect(s.math).toBe(true);
    expect(s.focus).toBe('explain-close');
    const box = await page.$eval('#explain', (e) => { const r = e.getBoundingClientRect(); return { l: r.left, r: r.right, t: r.top, b: r.bottom, w: innerWidth, h: innerHeight }; });
    expect(box.l >= 0 && box.r <= box.w && box.t >= 0 && box.b <= box.h).toBe(true);
    await page.keyboard.press('Escape');
    expect((await shown()).hidden).toBe(true);
    expect(await page.evaluate(() => document.activeElement?.closest('tr')?.dataset.readout)).toBe('row_kl_mean');
    // the variant's, by a tap, and the glossary
    await page.tap('#variant-info button.info').catch(() => page.click('#variant-info button.info'));
    s = await shown();
    expect(s.title).toBe('Performer FAVOR+');
    expect(s.text).toMatch(/Choromanski et al\. 2021/);
    await page.click('#glossary');
    s = await shown();
    expect(s.title).toBe('Glossary');
    expect(s.text).toMatch(/the logit scale/);
    await page.mouse.click(5, 700); // elsewhere
    expect((await shown()).hidden).toBe(true);
    await page.click('#glossary');
    await page.waitForFunction(() => document.querySelectorAll('#explain .glossary math').length > 10);
    expect(await axeProblems(page)).toEqual([]);
    // the glossary's formulas hold every symbol the page uses, each letter drawn in mathematical italic
    const glyphs = await fontReport(page);
    expect(glyphs.missing.map((m) => `${m.code} ${m.char} in "${m.text}"`), 'drawn as empty boxes (fonts-dejavu-extra)').toEqual([]);
    await page.screenshot({ path: 'build/e2e/explain-glossary-1280.png' });
    expect(errors).toEqual([]);
    await page.close();
  });
});
