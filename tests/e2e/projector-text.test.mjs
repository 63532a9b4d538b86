// Projector mode's rule, text at 18 px or more (docs/page.md), on every lesson at 1920×1080 in Debian's
// headless Chromium: every visible text node of the page, including each piece of the formulas (MathML
// draws a sub- or superscript 0.71× its base, so a formula's scripts fell to 13.4 and 9.5 px), every
// field and picker, the mechanism views' notes and chart labels (canvas text, recorded as it is drawn),
// and no label of those charts drawn over another (an axis title over its tick labels) or cut at its edge. Screenshots: build/e2e/projector-*.png.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { serve } from '../../scripts/serve.mjs';
import { launch, openLab, recordCanvasText, waitSettled } from './browser.mjs';
import { PRESETS } from '../../web/state/presets.mjs';

const ROOT = 'build/web';
const MIN_PX = 18;
let server, browser, page, errors;

beforeAll(async () => {
  if (!existsSync(`${ROOT}/index.html`) || !existsSync(`${ROOT}/attnviz.wasm`)) throw new Error('run `make web` first');
  await mkdir('build/e2e', { recursive: true });
  server = await serve(ROOT, 0);
  browser = await launch({ width: 1920, height: 1080 });
  await recordCanvasText(browser.context);
  await recordTextBoxes(browser.context);
  ({ page, errors } = await openLab(browser.context, server.url, { hash: 'preset=first-look&projector=1' }));
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** Every visible text node under MIN_PX: its size, its element and where it sits (at most 12). */
const smallText = () => page.evaluate((min) => {
  const out = [];
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    const el = n.parentElement;
    if (!/\S/.test(n.data) || el.closest('.katex-mathml, annotation, script, style, option, template, .sr-only')) continue;
    if (!el.getClientRects().length || getComputedStyle(el).visibility === 'hidden') continue;
    const px = parseFloat(getComputedStyle(el).fontSize);
    if (px < min - 0.01) out.push(`"${n.data.trim().slice(0, 30)}" (${el.localName} in #${el.closest('[id]')?.id}) at ${px.toFixed(1)} px`);
  }
  // a field's or a picker's text is no text node: its own font size
  for (const el of document.querySelectorAll('input, select, textarea')) {
    if (el instanceof HTMLInputElement && !/^(text|number|search)$/.test(el.type)) continue;
    if (!el.getClientRects().length || getComputedStyle(el).visibility === 'hidden') continue;
    const px = parseFloat(getComputedStyle(el).fontSize);
    if (px < min - 0.01) out.push(`the ${el.localName} #${el.id || el.closest('[id]')?.id} at ${px.toFixed(1)} px`);
  }
  return out.slice(0, 12);
}, MIN_PX);

/** Canvas fonts drawn since the last clear under MIN_PX. */
const smallCanvasFonts = () => page.evaluate((min) => [...window.__canvasText.keys()].filter((f) => !(parseFloat(f.match(/(\d+(\.\d+)?)px/)?.[1]) >= min)), MIN_PX);

/** The mechanism view a lesson opens has drawn once (its worker answered). */
async function mechDrawn(view) {
  const ready = {
    stepper: (m) => m.stepper?.t >= 0, scaling: (m) => m.scaling.done, recall: (m) => m.recall.done,
    distill: (m) => m.distill.t > 0 || m.distill.error,
  }[view];
  await page.waitForFunction((v) => {
    const m = window.attnviz.mechanisms();
    return m && m.open === v;
  }, view, { timeout: 60000, polling: 100 });
  for (const t0 = Date.now(); !ready(await page.evaluate(() => window.attnviz.mechanisms()));) {
    if (Date.now() - t0 > 120000) throw new Error(`the ${view} view did not draw`);
    await page.waitForTimeout(100);
  }
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
}

/**
 * Record where text is drawn on every canvas: per canvas, since its last full clear, each fillText's
 * text and its box on the canvas (its measured extent through the transform, so a rotated axis title
 * counts as drawn). An init script of the context, before the page opens.
 */
async function recordTextBoxes(context) {
  await context.addInitScript(() => {
    const boxes = new WeakMap();
    window.__textBoxes = (canvas) => boxes.get(canvas) ?? [];
    const P = CanvasRenderingContext2D.prototype, fill = P.fillText, clear = P.clearRect;
    P.clearRect = function (x, y, w, h) {
      if (x <= 0 && y <= 0 && w >= this.canvas.width && h >= this.canvas.height) boxes.set(this.canvas, []);
      return clear.call(this, x, y, w, h);
    };
    P.fillText = function (text, x, y, ...rest) {
      const m = this.measureText(text), t = this.getTransform();
      const left = x - m.actualBoundingBoxLeft, right = x + m.actualBoundingBoxRight;
      const top = y - m.actualBoundingBoxAscent, bottom = y + m.actualBoundingBoxDescent;
      const pts = [[left, top], [right, top], [left, bottom], [right, bottom]].map(([a, b]) => [t.a * a + t.c * b + t.e, t.b * a + t.d * b + t.f]);
      const xs = pts.map((q) => q[0]), ys = pts.map((q) => q[1]);
      if (/\S/.test(String(text))) {
        const list = boxes.get(this.canvas) ?? [];
        list.push({ text: String(text), l: Math.min(...xs), r: Math.max(...xs), t: Math.min(...ys), b: Math.max(...ys) });
        boxes.set(this.canvas, list);
      }
      return fill.call(this, text, x, y, ...rest);
    };
  });
}

/** Text drawn over other text on the mechanism views' chart canvases (an axis title over its tick labels),
 *  or cut at a canvas's edge. */
const overlappingLabels = () => page.evaluate(() => {
  const bad = [];
  for (const c of document.querySelectorAll('#mech canvas')) {
    if (!c.getClientRects().length) continue;
    const seen = new Set();
    const list = window.__textBoxes(c).filter((x) => { const k = JSON.stringify(x); if (seen.has(k)) return false; seen.add(k); return true; });
    for (const a of list) if (a.l < -1 || a.t < -1 || a.r > c.width + 1 || a.b > c.height + 1) bad.push(`"${a.text}" cut at the chart's edge`);
    for (let i = 0; i < list.length; i++) for (let j = i + 1; j < list.length; j++) {
      const a = list[i], b = list[j];
      if (a.l < b.r - 1 && b.l < a.r - 1 && a.t < b.b - 1 && b.t < a.b - 1) bad.push(`"${a.text}" over "${b.text}"`);
    }
  }
  return bad.slice(0, 8);
});

describe('projector mode at 1920×1080: no text under 18 px on any lesson', () => {
  for (const p of PRESETS) {
    it(p.name, async () => {
      await page.evaluate(() => window.__canvasText.clear());
      await page.evaluate((name) => { location.hash = `preset=${name}&projector=1`; }, p.name);
      const s = await page.evaluate(() => window.attnviz.snapshot());
      await waitSettled(page);
      if (s.state.mech) await mechDrawn(s.state.mech);
      await page.evaluate(() => document.fonts.ready);
      expect(await page.evaluate(() => 'projector' in document.documentElement.dataset)).toBe(true);
      if (['first-look', 'hedgehog-spiky', 'crossover-measured', 'recurrent-state'].includes(p.name)) {
        await page.screenshot({ path: `build/e2e/projector-${p.name}.png`, fullPage: true });
      }
      expect(await smallText()).toEqual([]);
      expect(await smallCanvasFonts()).toEqual([]);
      expect(await overlappingLabels()).toEqual([]);
      expect(errors).toEqual([]);
    });
  }
});
