// Sharing the lab (issue 10) in Debian's headless Chromium: a copied link reproduces the view it came
// from, the reader's theme stays out of links, the hosted build runs under a strict Content-Security-
// Policy header without a single violation, and the single-file build (build/single/attnviz.html) works
// from file:// with no server, while build/web/index.html opened as a file says what to do instead.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { serve } from '../../scripts/serve.mjs';
import { launch, openLab, exportItem } from './browser.mjs';

const ROOT = 'build/web';
const SINGLE = 'build/single/attnviz.html';
const STRICT = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; worker-src 'self' blob:; style-src 'self'";
let server, strict, browser;

beforeAll(async () => {
  if (!existsSync(`${ROOT}/index.html`) || !existsSync(SINGLE)) throw new Error('run `make web` first');
  server = await serve(ROOT, 0);
  strict = await serve(ROOT, 0, { headers: { 'Content-Security-Policy': STRICT } });
  browser = await launch({ width: 1280, height: 800 });
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await strict?.close();
});

const snapshot = (page) => page.evaluate(() => window.attnviz.snapshot());

describe('links', () => {
  it('a copied link reopens the same view: the same state and the same readouts', async () => {
    const { page, errors } = await openLab(browser.context, server.url, { hash: 'preset=linformer-s' });
    // change the view the way a reader does: a slider by keyboard, a picker, a checkbox
    await page.focus('#k-s');
    await page.keyboard.press('ArrowRight');
    await page.selectOption('#k-gen', 'clustered');
    const before = await snapshot(page);
    const link = page.url();
    expect(link).toMatch(/#preset=linformer-s&v=1&/);
    const { page: again, errors: errors2 } = await openLab(browser.context, link);
    const after = await snapshot(again);
    expect(after.state).toEqual(before.state);
    expect(after.readouts).toEqual(before.readouts);
    expect([...errors, ...errors2]).toEqual([]);
    await page.close(); await again.close();
  });

  it("the theme is the reader's: never in a link, remembered across visits, an old link's theme ignored", async () => {
    const { page, errors } = await openLab(browser.context, server.url, { hash: 'v=1&n=64' });
    await page.click('#theme'); // auto → dark
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
    const s = await snapshot(page);
    expect(Object.keys(s.state)).not.toContain('theme');
    expect(page.url()).not.toMatch(/theme=/);
    await page.reload();
    await snapshot(page);
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
    // a link from before, carrying the author's theme: taken without a notice, the reader's theme kept
    await page.evaluate(() => { location.hash = 'v=1&n=64&theme=light'; });
    await snapshot(page);
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
    expect(await page.$eval('#notice', (e) => e.hidden)).toBe(true);
    await page.click('#theme'); await page.click('#theme'); // dark → light → auto: back as it was
    expect(errors).toEqual([]);
    await page.close();
  });
});

describe('a strict Content-Security-Policy', () => {
  it('the hosted build runs under it with no violation: heatmaps, formulas as MathML, workers, a lesson', async () => {
    const page = await browser.context.newPage();
    await page.addInitScript(() => {
      window.__violations = [];
      document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(`${e.violatedDirective}: ${e.blockedURI} ${e.sample ?? ''}`));
    });
    const errors = [];
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    page.on('pageerror', (e) => errors.push(String(e)));
    const res = await page.goto(`${strict.url}#preset=rank-le-d`);
    expect(res.headers()['content-security-policy']).toBe(STRICT);
    const s = await snapshot(page);
    expect(s.readouts.rank).toBeLessThanOrEqual(16);
    await page.selectOption('#k-variant', 'performer');
    await snapshot(page);
    expect(await page.$$eval('#formula math, #readout-table math', (m) => m.length)).toBeGreaterThan(5);
    expect(await page.$$eval('[style]', (els) => els.filter((e) => e.closest('#formula, #readout-table')).length)).toBe(0);
    expect(await page.evaluate(() => window.__violations)).toEqual([]);
    // exports: SVG and the data are files from blob: links, no violation
    expect((await exportItem(page, 'M.svg')).bytes.toString()).toMatch(/^<svg /);
    expect((await exportItem(page, 'M.npy')).bytes.subarray(1, 6).toString()).toBe('NUMPY');
    expect(await page.evaluate(() => window.__violations)).toEqual([]);
    expect(errors).toEqual([]);
    // PNG draws the SVG as an image, which this policy (no img-src blob:) forbids: the page says so
    await page.click('[data-export="M.png"]');
    await page.waitForSelector('#notice:not([hidden])');
    expect(await page.textContent('#notice')).toMatch(/export M\.png: .*Content-Security-Policy.*the SVG export works/);
    await page.close();
  });
});

describe('from a file', () => {
  it('the single-file build works from file:// with no server, and gives the hosted page\'s readouts', async () => {
    const file = pathToFileURL(resolve(SINGLE)).href;
    const page = await browser.context.newPage();
    const errors = [];
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    page.on('pageerror', (e) => errors.push(String(e)));
    const requests = [];
    page.on('request', (r) => { if (!r.url().startsWith('data:') && !r.url().startsWith('blob:')) requests.push(r.url()); });
    await page.goto(`${file}#preset=performer-m`);
    const s = await snapshot(page);
    expect(s.readouts.variant).toBe('performer');
    expect(requests, requests.join(' ')).toEqual([file]); // one file: nothing else is fetched
    const { page: hosted } = await openLab(browser.context, server.url, { hash: 'preset=performer-m' });
    expect(s.readouts).toEqual((await snapshot(hosted)).readouts);
    // exports work from the file too (blob: links and images only)
    const png = await exportItem(page, 'spectrum.png');
    expect([...png.bytes.subarray(1, 4)].map((c) => String.fromCharCode(c)).join('')).toBe('PNG');
    expect((await exportItem(page, 'bundle.zip')).bytes.readUInt32LE(0)).toBe(0x04034b50);
    expect(requests, requests.join(' ')).toEqual([file]);
    expect(errors).toEqual([]);
    await page.close(); await hosted.close();
  });

  it('build/web/index.html opened as a file says it needs a server, instead of loading forever', async () => {
    const page = await browser.context.newPage();
    await page.goto(pathToFileURL(resolve(ROOT, 'index.html')).href);
    await expect.poll(() => page.$eval('#status', (e) => e.textContent)).toMatch(/needs a web server.*single-file build/);
    await page.close();
  });
});
