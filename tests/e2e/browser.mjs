// browser.mjs: launch Debian's Chromium headless through playwright-core (no downloaded browsers).
import { chromium } from 'playwright-core';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** A fresh persistent context (its own temp profile). Returns {context, close()}. */
export async function launch({ width = 1366, height = 768, colorScheme = 'light' } = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'attnviz-chromium-'));
  const context = await chromium.launchPersistentContext(dir, {
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width, height },
    colorScheme,
  });
  return {
    context,
    async close() { await context.close(); await rm(dir, { recursive: true, force: true }); },
  };
}

/** Open the lab in a new page, collecting console errors and page errors; waits until it has drawn. */
export async function openLab(context, url, { hash = '' } = {}) {
  const page = await context.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('requestfailed', (r) => errors.push(`request failed: ${r.url()}`));
  await page.goto(url + (hash ? `#${hash}` : ''));
  await waitSettled(page);
  return { page, errors };
}

/** Wait until the lab has heatmaps, a spectrum for the latest request, and no pending commit. */
export async function waitSettled(page, timeout = 30000) {
  await page.waitForFunction(() => {
    const a = window.attnviz;
    if (!a || !a.ready || !a.view.frame) return false;
    const v = a.view;
    return a.idle && !v.waitingFrame && !v.specStale && !v.readoutsStale && !!v.spec && !!v.readouts;
  }, null, { timeout, polling: 50 });
}

/** The centre x of a range input's thumb at value v (Chromium's default 16-px-wide thumb). */
export async function rangeX(page, selector, value) {
  return page.$eval(selector, (el, v) => {
    const r = el.getBoundingClientRect();
    const min = Number(el.min), max = Number(el.max);
    const thumb = 16;
    return { x: r.left + thumb / 2 + ((v - min) / (max - min)) * (r.width - thumb), y: r.top + r.height / 2 };
  }, value);
}

/** Drag a range input's thumb with the mouse from value a to value b in `steps` moves. */
export async function dragRange(page, selector, a, b, steps = 12) {
  const p0 = await rangeX(page, selector, a);
  const p1 = await rangeX(page, selector, b);
  await page.mouse.move(p0.x, p0.y);
  await page.mouse.down();
  for (let i = 1; i <= steps; i++) {
    await page.mouse.move(p0.x + ((p1.x - p0.x) * i) / steps, p0.y);
    await page.waitForTimeout(16);
  }
  await page.mouse.up();
}

/** Distinct colours in a heatmap canvas (a blank or uniform canvas has 1). */
export async function canvasColours(page, id) {
  return page.$eval(`#${id}`, (c) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    const set = new Set();
    for (let i = 0; i < d.length; i += 4) set.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
    return { colours: set.size, width: c.width, height: c.height };
  });
}
