// What the page calls "the reference" (issue 28), in Debian's headless Chromium: A is plain softmax with
// the variant's scale and mask and no decay or window (docs/readouts.md), so a decayed or windowed softmax
// is a variant, and says so in its captions and help; a sweep reaching plain softmax (decay = 1) says why
// that point has no number, in sweep() (the CLI's `defined` and `reasons`) and in the exported figure.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync } from 'node:fs';
import { serve } from '../../scripts/serve.mjs';
import { launch, openLab, exportItem } from './browser.mjs';

const ROOT = 'build/web';
let server, browser;

beforeAll(async () => {
  if (!existsSync(`${ROOT}/index.html`)) throw new Error('run `make web` first');
  server = await serve(ROOT, 0);
  browser = await launch({ width: 1280, height: 800 });
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** The captions and help as on screen. */
const texts = (page) => page.evaluate(() => ({
  picker: document.getElementById('k-variant').selectedOptions[0].textContent,
  M: document.querySelector('#fig-M figcaption').textContent, A: document.querySelector('#fig-A figcaption').textContent,
  hint: document.getElementById('hint').textContent, formula: document.getElementById('formula').textContent,
}));

describe('the reference is plain softmax', () => {
  it('a windowed or decayed softmax is a variant compared with A, not the reference', async () => {
    const { page, errors } = await openLab(browser.context, server.url, { hash: 'v=1&variant=softmax&window=16&causal=1' });
    await page.evaluate(() => window.attnviz.snapshot());
    let t = await texts(page);
    expect(t.M).not.toMatch(/reference/);
    expect(t.M).toMatch(/window/);
    expect(t.picker).toBe('softmax, window W = 16'); // the variant picker names it as the caption does
    expect(t.hint).not.toMatch(/^The reference/);
    expect(t.hint).toMatch(/compared with/);
    expect(t.A).toMatch(/no decay, no window/);
    await page.evaluate(() => { location.hash = 'v=1&variant=softmax&decay=0.9&causal=1'; });
    await expect.poll(async () => (await texts(page)).M, { timeout: 20000 }).toMatch(/decay γ = 0\.9/);
    t = await texts(page);
    expect(t.M).not.toMatch(/reference/);
    expect(t.hint).toMatch(/compared with/);
    expect(t.formula).toMatch(/γ/);
    // plain softmax is the reference again, and its captions say so
    await page.evaluate(() => { location.hash = 'v=1&variant=softmax&causal=1'; });
    await expect.poll(async () => (await texts(page)).M, { timeout: 20000 }).toMatch(/^softmax \(reference\)/);
    t = await texts(page);
    expect(t.picker).toBe('softmax (reference)');
    expect(t.hint).toMatch(/^The reference/);
    expect(t.A).not.toMatch(/no decay/);
    // the exported heatmap of A names it the same way as the page when a window is on
    await page.evaluate(() => { location.hash = 'v=1&variant=softmax&window=16&causal=1'; });
    await expect.poll(async () => (await texts(page)).A, { timeout: 20000 }).toMatch(/no decay, no window/);
    const svgA = (await exportItem(page, 'A.svg')).bytes.toString();
    expect(svgA).toMatch(/no decay, no window/);
    const svgM = (await exportItem(page, 'M.svg')).bytes.toString();
    expect(svgM).not.toMatch(/softmax \(reference\)/);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('a sweep reaching plain softmax names that point and its reason, on screen, in sweep() and in the SVG', async () => {
    const { page, errors } = await openLab(browser.context, server.url, { hash: 'v=1&variant=softmax&n=64&d=16&causal=1&sweep=decay&sweep_y=error_fro_rel' });
    const sw = await page.evaluate(() => window.attnviz.sweep());
    const last = sw.values.length - 1;
    expect(sw.values[last]).toBe(1);
    expect(sw.mean[last]).toBe(null);
    expect(sw.defined[last]).toBe(0);
    expect(sw.reasons[last]).toMatch(/^no softmax reference/);
    for (let i = 0; i < last; i++) { expect(sw.defined[i]).toBe(1); expect(sw.reasons[i]).toBe(null); }
    const note = await page.textContent('.sweep-note');
    expect(note).toContain(`undefined at decay = 1: ${sw.reasons[last]}`);
    const svg = (await exportItem(page, 'sweep.svg')).bytes.toString();
    const words = await page.evaluate((t) => [...new DOMParser().parseFromString(t, 'image/svg+xml').querySelectorAll('text')].map((x) => x.textContent).join(' '), svg);
    expect(words.replace(/\s+/g, ' ')).toContain(`undefined at decay = 1: ${sw.reasons[last]}`.replace(/\s+/g, ' '));
    expect(words).toContain('error vs softmax');
    expect(words).not.toContain('error_fro_rel');
    expect(errors).toEqual([]);
    await page.close();
  });
});
