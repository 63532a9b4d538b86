// browser.mjs: launch Debian's Chromium headless through playwright-core (no downloaded browsers).
import { chromium } from 'playwright-core';
import { mkdtemp, rm, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/**
 * A fresh persistent context (its own temp profile). Returns {context, close()}. `deviceScaleFactor` 2
 * with half the window's size is the page at 200 % zoom; `hasTouch` gives it a touch screen.
 */
export async function launch({ width = 1366, height = 768, colorScheme = 'light', deviceScaleFactor = 1, hasTouch = false } = {}) {
  const dir = await mkdtemp(join(tmpdir(), 'attnviz-chromium-'));
  const context = await chromium.launchPersistentContext(dir, {
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width, height },
    deviceScaleFactor,
    colorScheme,
    hasTouch, // a touch screen: page.touchscreen.tap
  });
  return {
    context,
    async close() { await context.close(); await rm(dir, { recursive: true, force: true }); },
  };
}

/** Open the lab in a new page, collecting console errors and page errors; waits until it has drawn. */
export async function openLab(context, url, { hash = '', timeout = 30000 } = {}) {
  const page = await context.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('requestfailed', (r) => errors.push(`request failed: ${r.url()}`));
  await page.goto(url + (hash ? `#${hash}` : ''));
  await waitSettled(page, timeout);
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

/**
 * Record the text the page draws on canvases (uPlot's axes, the histogram's labels) with its font, so
 * that fontReport can check it too. Call before the pages open (an init script of the context).
 */
export async function recordCanvasText(context) {
  await context.addInitScript(() => {
    const seen = new Map(); // font → the characters drawn with it
    window.__canvasText = seen;
    const fill = CanvasRenderingContext2D.prototype.fillText;
    CanvasRenderingContext2D.prototype.fillText = function (text, ...rest) {
      const chars = seen.get(this.font) ?? new Set();
      if (chars.size < 512) for (const c of String(text)) chars.add(c);
      seen.set(this.font, chars);
      return fill.call(this, text, ...rest);
    };
  });
}

/**
 * The character text-transform: math-auto draws for `ch` (MathML Core's italic mapping, the
 * Mathematical Alphanumeric Symbols block): Latin and Greek letters and a few symbols become their
 * mathematical italic forms (h is U+210E, Planck's constant); anything else is drawn as it is.
 */
export function mathItalic(ch) {
  const c = ch.codePointAt(0);
  const at = (base, first) => String.fromCodePoint(base + c - first);
  const special = { 0x68: 0x210e, 0x131: 0x1d6a4, 0x237: 0x1d6a5, 0x3f4: 0x1d6f3, 0x2207: 0x1d6fb, 0x2202: 0x1d715,
    0x3f5: 0x1d716, 0x3d1: 0x1d717, 0x3f0: 0x1d718, 0x3d5: 0x1d719, 0x3f1: 0x1d71a, 0x3d6: 0x1d71b };
  if (special[c]) return String.fromCodePoint(special[c]);
  if (c >= 0x41 && c <= 0x5a) return at(0x1d434, 0x41);
  if (c >= 0x61 && c <= 0x7a) return at(0x1d44e, 0x61);
  if (c >= 0x391 && c <= 0x3a9 && c !== 0x3a2) return at(0x1d6e2, 0x391);
  if (c >= 0x3b1 && c <= 0x3c9) return at(0x1d6fc, 0x3b1);
  return ch;
}

// every character mathItalic changes, and what it draws instead (passed to the page as data)
const MATH_ITALIC = Object.fromEntries([[0x41, 0x5a], [0x61, 0x7a], [0x391, 0x3a9], [0x3b1, 0x3c9],
  [0x131, 0x131], [0x237, 0x237], [0x3d1, 0x3d1], [0x3d5, 0x3d6], [0x3f0, 0x3f5], [0x2202, 0x2202], [0x2207, 0x2207]]
  .flatMap(([a, b]) => Array.from({ length: b - a + 1 }, (_, i) => String.fromCodePoint(a + i)))
  .map((ch) => [ch, mathItalic(ch)]).filter(([ch, it]) => ch !== it));

const MONO_NAME = /mono|courier|fixed|console|typewriter/i;

/**
 * What the page's visible text is drawn with. Through the DevTools protocol, the platform fonts that
 * render each element's own text (CSS.getPlatformFontsForNode); in the page, per character, whether
 * some font has a glyph for it (drawn on a canvas in the element's font, it must differ from an
 * unassigned code point, which every font draws as its .notdef box), and whether a font is
 * monospaced ('iiiiiiiiii' as wide as 'WWWWWWWWWW'). Canvas text recorded by recordCanvasText is
 * checked the same way, by its font string.
 * Returns {fonts: {family: {custom, mono, uses}}, monoFallback: [...], missing: [...]} where
 * monoFallback lists text set in a monospaced platform font although its CSS asks for none, and
 * missing lists characters shown as .notdef boxes (each with an example text and its font). `root`: the
 * element whose text is checked (a selector; the whole body by default); `canvas`: canvas text too.
 */
export async function fontReport(page, { root = 'body', canvas = true } = {}) {
  await page.evaluate(() => document.fonts.ready);
  const items = await page.evaluate(({ italic, root, canvas }) => {
    const out = [];
    const visible = (el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';
    for (const el of document.querySelector(root).querySelectorAll('*')) {
      if (el.closest('.katex-mathml, script, style, template, option, noscript')) continue; // not drawn
      let text = '';
      for (const n of el.childNodes) if (n.nodeType === Node.TEXT_NODE) text += n.data;
      if (el instanceof HTMLSelectElement) text = el.selectedOptions[0]?.textContent ?? '';
      if (el instanceof HTMLInputElement && /^(text|number|search)$/.test(el.type)) text = el.value;
      if (!/\S/.test(text) || !visible(el)) continue;
      const cs = getComputedStyle(el);
      // MathML's <mi>x</mi> is drawn in its mathematical italic code point (σ as U+1D70E), which only
      // some fonts have (fonts-dejavu-extra): check the character the browser draws, not the source's
      if (cs.textTransform === 'math-auto' && [...text.trim()].length === 1) text = italic[text.trim()] ?? text.trim();
      out.push({ el, text: text.trim().replace(/\s+/g, ' ').slice(0, 200), family: cs.fontFamily,
        font: `${cs.fontStyle} ${cs.fontWeight} 32px ${cs.fontFamily}` });
    }
    window.__fontItems = out.map((o) => o.el);
    for (const o of out) delete o.el;
    for (const [font, chars] of canvas ? window.__canvasText ?? [] : []) {
      const family = font.replace(/^.*?\d+(\.\d+)?px(\s*\/\s*\S+)?\s+/, '');
      const weight = /\bbold\b|\b[6-9]00\b/.test(font) ? 'bold ' : '';
      out.push({ canvas: true, text: [...chars].join(''), family, font: `${weight}32px ${family}` });
    }
    return out;
  }, { italic: MATH_ITALIC, root, canvas });

  // the platform fonts of each element's own text, through the DevTools protocol
  const cdp = await page.context().newCDPSession(page);
  const fonts = {};
  try {
    await cdp.send('DOM.enable');
    await cdp.send('CSS.enable');
    await cdp.send('DOM.getDocument', { depth: 0 });
    const { result } = await cdp.send('Runtime.evaluate', { expression: 'window.__fontItems' });
    const { result: props } = await cdp.send('Runtime.getProperties', { objectId: result.objectId, ownProperties: true });
    for (const prop of props) {
      if (!/^\d+$/.test(prop.name)) continue;
      const { nodeId } = await cdp.send('DOM.requestNode', { objectId: prop.value.objectId });
      const { fonts: used } = await cdp.send('CSS.getPlatformFontsForNode', { nodeId });
      items[Number(prop.name)].platform = used.map((f) => ({ family: f.familyName, custom: f.isCustomFont }));
    }
    await cdp.send('Runtime.evaluate', { expression: 'delete window.__fontItems' });
  } finally {
    await cdp.detach();
  }

  // per character: a glyph or the .notdef box? and which platform fonts are monospaced?
  const families = [...new Set(items.flatMap((it) => (it.platform ?? []).filter((f) => !f.custom).map((f) => f.family)))];
  const checked = await page.evaluate(GLYPH_PROBE, { items, families });

  const wantsMono = (family) => /mono|courier|typewriter/i.test(family);
  const monoFallback = [];
  items.forEach((it, i) => {
    for (const f of it.platform ?? []) {
      const rec = fonts[f.family] ??= { custom: f.custom, mono: !f.custom && (checked.monoFamilies.includes(f.family) || MONO_NAME.test(f.family)), uses: 0 };
      rec.uses++;
      if (rec.mono && !wantsMono(it.family)) monoFallback.push({ text: it.text, family: it.family, platform: f.family });
    }
    // canvas text has no platform-font report: its font string must not resolve to a monospaced font
    if (it.canvas && checked.monoItems[i] && !wantsMono(it.family)) monoFallback.push({ text: it.text, family: `canvas, ${it.family}`, platform: 'a monospaced font' });
  });
  return { fonts, monoFallback, missing: checked.missing, items: items.length };
}

/**
 * In the page: for each item {text, font (a canvas font string), family, canvas?}, the characters drawn as
 * the .notdef box (each compared with an unassigned code point drawn in the same font, which every font
 * draws as its .notdef box), and which of `families` are monospaced. Used by fontReport and missingGlyphs.
 */
const GLYPH_PROBE = ({ items, families }) => {
  const c = document.createElement('canvas');
  c.width = 96; c.height = 64;
  const ctx = c.getContext('2d', { willReadFrequently: true });
  ctx.textBaseline = 'top';
  const draw = (font, s) => {
    ctx.clearRect(0, 0, c.width, c.height);
    ctx.font = font;
    ctx.fillText(s, 8, 8);
    const d = ctx.getImageData(0, 0, c.width, c.height).data;
    let h = 0;
    for (let i = 3; i < d.length; i += 4) h = (Math.imul(h, 31) + d[i]) >>> 0;
    return `${ctx.measureText(s).width}:${h}`;
  };
  const mono = (font) => { ctx.font = font; return ctx.measureText('iiiiiiiiii').width === ctx.measureText('WWWWWWWWWW').width; };
  const notdef = new Map();
  const missing = [];
  const seen = new Set();
  for (const it of items) {
    if (!notdef.has(it.font)) notdef.set(it.font, draw(it.font, '\u0378'));
    for (const ch of it.text) {
      if (!/[\p{L}\p{N}\p{P}\p{S}]/u.test(ch) || seen.has(it.font + ch)) continue;
      seen.add(it.font + ch);
      if (draw(it.font, ch) === notdef.get(it.font)) missing.push({ char: ch, code: `U+${ch.codePointAt(0).toString(16).toUpperCase().padStart(4, '0')}`, text: it.text, family: it.canvas ? `canvas, ${it.family}` : it.family });
    }
    it.mono = mono(it.font);
  }
  const monoFamilies = families.filter((f) => mono(`32px "${f}"`));
  return { missing, monoFamilies, monoItems: items.map((it) => it.mono) };
};

/**
 * The characters of `items` ({text, font, family, canvas?}: text and the canvas font string it is drawn
 * in) that no font draws: [{char, code, text, family}]. A cheaper check than fontReport's, for text
 * collected over many views (tests/e2e/zh-everywhere.test.mjs).
 */
export async function missingGlyphs(page, items) {
  return (await page.evaluate(GLYPH_PROBE, { items, families: [] })).missing;
}

/** The header's export menu (web/ui/export-menu.mjs): open it, click `item` (its data-export, e.g.
 *  'M.png'), save the download. Returns {name, path, bytes}. */
export async function exportItem(page, item) {
  if (!(await page.$eval('#export', (d) => d.open))) await page.click('#export > summary');
  const [dl] = await Promise.all([page.waitForEvent('download', { timeout: 30000 }), page.click(`[data-export="${item}"]`)]);
  const path = join(await mkdtemp(join(tmpdir(), 'attnviz-dl-')), dl.suggestedFilename());
  await dl.saveAs(path);
  return { name: dl.suggestedFilename(), path, bytes: await readFile(path) };
}

/**
 * Lay an SVG out in the page and measure it: every <text>'s box as drawn (rotation included), with its
 * class and text; the boxes of the curves' markers (g.markers) and of the entropy means (path.mean); the
 * figure's size. Boxes are {x0, y0, x1, y1} in the SVG's units.
 */
export function measureSvg(page, svg) {
  return page.evaluate((text) => {
    const host = document.createElement('div');
    host.style.cssText = 'position:absolute;left:0;top:0;';
    document.body.append(host);
    const root = document.importNode(new DOMParser().parseFromString(text, 'image/svg+xml').documentElement, true);
    host.append(root);
    const o = root.getBoundingClientRect();
    const box = (el) => { const r = el.getBoundingClientRect(); return { x0: r.left - o.left, y0: r.top - o.top, x1: r.right - o.left, y1: r.bottom - o.top }; };
    const out = {
      width: Number(root.getAttribute('width')), height: Number(root.getAttribute('height')),
      texts: [...root.querySelectorAll('text')].map((t) => ({ cls: t.getAttribute('class') ?? '', text: t.textContent, ...box(t) })),
      markers: [...root.querySelectorAll('g.markers > *')].map(box), means: [...root.querySelectorAll('path.mean')].map(box),
    };
    host.remove();
    return out;
  }, svg);
}
export const boxesMeet = (a, b, slack = 0.5) => a.x0 + slack < b.x1 && b.x0 + slack < a.x1 && a.y0 + slack < b.y1 && b.y0 + slack < a.y1;
/** What is wrong with a measured figure's text: TeX source, a box outside the figure, two boxes overlapping. */
export function svgTextProblems(m) {
  const out = [];
  for (const t of m.texts) {
    if (/_\{|\^\{|\\/.test(t.text)) out.push(`TeX in "${t.text}"`);
    if (t.x0 < -0.5 || t.y0 < -0.5 || t.x1 > m.width + 0.5 || t.y1 > m.height + 0.5) out.push(`outside: "${t.text}" ${JSON.stringify([t.x0, t.y0, t.x1, t.y1].map(Math.round))}`);
  }
  for (let i = 0; i < m.texts.length; i++) for (let j = i + 1; j < m.texts.length; j++) {
    if (boxesMeet(m.texts[i], m.texts[j])) out.push(`overlap: "${m.texts[i].text.slice(0, 40)}" and "${m.texts[j].text.slice(0, 40)}"`);
  }
  return out;
}
