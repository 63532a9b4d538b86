// The heatmap's first click or tap (web/ui/heatmaps.mjs) in Debian's headless Chromium: it reports the
// cell under the pointer, not row 0, col 0. A click focuses the canvas (it takes the keyboard's cell
// cursor), and focusing used to show the cursor's cell, which starts at 0, 0, over the hovered one.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync } from 'node:fs';
import { serve } from '../../scripts/serve.mjs';
import { launch, openLab } from './browser.mjs';

const ROOT = 'build/web';
const N = 64;
let server;

beforeAll(async () => {
  if (!existsSync(`${ROOT}/index.html`) || !existsSync(`${ROOT}/attnviz.wasm`)) throw new Error('run `make web` first');
  server = await serve(ROOT, 0);
});

afterAll(async () => { await server?.close(); });

/** The centre of cell (row, col) of heatmap `id` in page coordinates. */
const cellAt = (page, id, row, col) => page.$eval(`#${id}`, (c, [r, k, n]) => {
  const b = c.getBoundingClientRect();
  return { x: b.left + ((k + 0.5) / n) * b.width, y: b.top + ((r + 0.5) / n) * b.height };
}, [row, col, N]);

const said = (page) => page.evaluate(() => ({ hover: document.getElementById('hover').textContent, say: document.getElementById('cell-say').textContent }));

describe('the heatmap\'s first click or tap', () => {
  it('a click reports the clicked cell, and arrow keys move on from it', async () => {
    const b = await launch({ width: 1366, height: 768 });
    const { page, errors } = await openLab(b.context, server.url, { hash: `v=1&variant=elu&n=${N}` });
    await page.evaluate(() => window.attnviz.snapshot());
    const p = await cellAt(page, 'hm-M', 10, 37);
    await page.mouse.click(p.x, p.y);
    expect(await page.evaluate(() => document.activeElement.id)).toBe('hm-M');
    let s = await said(page);
    expect(s.hover).toMatch(/^row 10, col 37: M /);
    expect(s.say).toMatch(/^row 10, col 37: M /);
    await page.keyboard.press('ArrowDown');
    expect((await said(page)).hover).toMatch(/^row 11, col 37: /);
    // a second click on the focused map moves the cursor there too
    const q = await cellAt(page, 'hm-M', 3, 5);
    await page.mouse.click(q.x, q.y);
    expect((await said(page)).hover).toMatch(/^row 3, col 5: /);
    await page.keyboard.press('ArrowRight');
    expect((await said(page)).hover).toMatch(/^row 3, col 6: /);
    expect(errors).toEqual([]);
    await b.close();
  });

  it('a tap on a touch screen reports the tapped cell', async () => {
    const b = await launch({ width: 390, height: 844, hasTouch: true });
    const { page, errors } = await openLab(b.context, server.url, { hash: `v=1&variant=elu&n=${N}` });
    await page.evaluate(() => window.attnviz.snapshot());
    await page.$eval('#hm-A', (c) => c.scrollIntoView({ block: 'center' }));
    const p = await cellAt(page, 'hm-A', 50, 20);
    await page.touchscreen.tap(p.x, p.y);
    const s = await said(page);
    expect(s.hover).toMatch(/^row 50, col 20: M /);
    expect(errors).toEqual([]);
    await b.close();
  });
});
