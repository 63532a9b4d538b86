// Themes for embeds (issue 32, item 1; docs/embedding.md, "Themes") in Debian's headless Chromium: a test
// blog on a second origin, in a light and a dark theme (its own color-scheme) at 700 and 360 px, holds
// three iframes (embed=heatmap, spectrum, readouts, theme= the blog's) and three <attn-viz> elements (no
// theme attribute: auto, the host's color-scheme). axe-core finds no contrast problem in the post or in a
// frame; the charts' axes (uPlot's strokes and the pixels drawn) and the legends contrast ≥ 4.5:1 with the
// background actually under them. theme=dark in a link, the theme attribute, attnviz:set {theme} and auto
// under a dark host all give the dark look, and a switch at run time redraws the charts without computing.
// Screenshots: build/e2e/embed-theme-*.png.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync, mkdtempSync, writeFileSync, rmSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '../../scripts/serve.mjs';
import { launch } from './browser.mjs';
import { themeColors } from '../../web/render/charts.mjs';

const ROOT = 'build/web';
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const VIEWS = ['heatmap', 'spectrum', 'readouts'];
const LINKS = { heatmap: 'variant=focused&n=64&p=3&controls=p', spectrum: 'variant=elu&n=128&d=16', readouts: 'variant=focused&n=64' };
let lab, host, hostDir, browser;

// Colour arithmetic (WCAG 2 relative luminance and contrast) and what a figure shows, evaluated in a page or
// a frame: the background actually under an element (the first opaque one, out through shadow roots), the
// uPlot charts' axis strokes, and the most contrasting pixel of the text in their axis strips.
const HELPERS = `window.__th = (() => {
  const parse = (c) => {
    if (/^#[0-9a-f]{3,8}$/i.test(c)) { const h = c.length === 4 ? [...c.slice(1)].map((x) => x + x).join('') : c.slice(1, 7); return { r: parseInt(h.slice(0, 2), 16), g: parseInt(h.slice(2, 4), 16), b: parseInt(h.slice(4, 6), 16), a: 1 }; }
    const m = String(c).match(/rgba?\\(([^)]+)\\)/); if (!m) return null;
    const [r, g, b, a = 1] = m[1].split(/[\\s,\\/]+/).filter(Boolean).map(Number); return { r, g, b, a };
  };
  const lum = ({ r, g, b }) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; }; return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
  const contrast = (x, y) => { const a = lum(x), b = lum(y); return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05); };
  const up = (n) => n.parentElement ?? n.getRootNode()?.host ?? null;
  const bgUnder = (el) => {
    for (let n = el; n; n = up(n)) { const c = parse(getComputedStyle(n).backgroundColor); if (c && c.a > 0.99) return c; }
    return { r: 255, g: 255, b: 255, a: 1 }; // the canvas of an unstyled page
  };
  /** A uPlot chart's axis colours, their contrast with the background under the chart, and the pixels drawn. */
  const chart = (u) => {
    const bg = bgUnder(u.root);
    const strokes = u.axes.map((a, i) => a.stroke(u, i));
    const c = u.ctx.canvas, d = u.ctx.getImageData(0, 0, c.width, c.height).data, { left, top, width, height } = u.bbox;
    // the axes' strips: below the plot (x) and left of it (y); only the axes' text and labels are drawn there
    let best = 1;
    const scan = (x0, y0, x1, y1) => {
      for (let y = Math.max(0, y0); y < Math.min(c.height, y1); y++) for (let x = Math.max(0, x0); x < Math.min(c.width, x1); x++) {
        const i = 4 * (y * c.width + x), a = d[i + 3] / 255;
        if (a === 0) continue;
        const px = { r: a * d[i] + (1 - a) * bg.r, g: a * d[i + 1] + (1 - a) * bg.g, b: a * d[i + 2] + (1 - a) * bg.b };
        best = Math.max(best, contrast(px, bg));
      }
    };
    scan(left, top + height + 1, left + width, c.height);
    scan(0, top, left - 1, top + height);
    const legend = [...u.root.querySelectorAll('.u-legend th')].map((th) => contrast(parse(getComputedStyle(th).color), bgUnder(th)));
    return { strokes, axis: strokes.map((s) => contrast(parse(s), bg)), drawn: best, legend, bgLum: lum(bg), axisLum: lum(parse(strokes[0])) };
  };
  return { parse, lum, contrast, bgUnder, chart };
})();`;

/** The blog post: a 700 px column (the whole width on a phone), its own theme, three iframes and three elements. */
function blog(theme) {
  const dark = theme === 'dark';
  const frames = VIEWS.map((v) => `<iframe id="f-${v}" title="attnviz: ${v}" height="${v === 'readouts' ? 520 : 420}" src="${lab.url}#v=1&${LINKS[v]}&embed=${v}&theme=${theme}"></iframe>`).join('\n<p>More prose between the figures.</p>\n');
  return `<!doctype html><html lang="en"${dark ? ' class="dark"' : ''}><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>Linear attention, drawn (${theme})</title><link rel="icon" href="data:,">
<style>
  html { color-scheme: light; background: #fdfdfc; color: #222; }
  html.dark { color-scheme: dark; background: #17191d; color: #d8dadf; }
  body { max-width: 700px; margin: 0 auto; padding: 0 16px; font: 17px/1.6 Georgia, 'DejaVu Serif', serif; }
  iframe { display: block; width: 100%; border: 0; margin: 1em 0; }
  attn-viz { margin: 1em 0; }
  a { color: #0b5cad; } html.dark a { color: #8cc4ff; }
</style>
<script type="module" src="${lab.url}embed.js"></script>
<main><h1>Linear attention, drawn</h1>
<p>Some prose before the figures, as a <a href="#x">blog post</a> has.</p>
${frames}
<p>The same figures as elements:</p>
<attn-viz id="e-heatmap" variant="focused" n="64" p="3" view="heatmap" controls="p"></attn-viz>
<attn-viz id="e-spectrum" variant="elu" n="128" d="16" view="spectrum"></attn-viz>
<attn-viz id="e-readouts" variant="focused" n="64" view="readouts"></attn-viz>
<p>Prose after the figures.</p></main>
<script>window.ask = (id, msg) => document.getElementById(id).contentWindow.postMessage(msg, '*');</script>`;
}

beforeAll(async () => {
  if (!existsSync(`${ROOT}/index.html`)) throw new Error('run `make web` first');
  await mkdir('build/e2e', { recursive: true });
  lab = await serve(ROOT, 0, { headers: { 'Access-Control-Allow-Origin': '*' } });
  hostDir = mkdtempSync(join(tmpdir(), 'attnviz-blog-'));
  host = await serve(hostDir, 0);
  for (const theme of ['light', 'dark']) writeFileSync(join(hostDir, `${theme}.html`), blog(theme));
  browser = await launch({ width: 732, height: 900 });
}, 60000);

afterAll(async () => {
  await browser?.close();
  await lab?.close();
  await host?.close();
  if (hostDir) rmSync(hostDir, { recursive: true, force: true });
});

/** Open the blog in `theme` at `width` px; wait until every frame and element shows its settled view. */
async function open(theme, width) {
  const page = await browser.context.newPage();
  await page.setViewportSize({ width, height: 900 });
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${host.url}${theme}.html`);
  await page.waitForFunction(() => customElements.get('attn-viz'));
  await page.evaluate(HELPERS);
  const frames = {};
  for (const v of VIEWS) {
    // in view: Chromium runs no animation frame in a cross-origin frame off screen (the lab commits in one)
    await page.$eval(`#f-${v}`, (f) => f.scrollIntoView());
    frames[v] = await (await page.$(`#f-${v}`)).contentFrame();
    await frames[v].waitForFunction(() => window.attnviz?.ready, null, { timeout: 30000 });
    await frames[v].evaluate(() => window.attnviz.snapshot());
    await frames[v].evaluate(HELPERS);
  }
  for (const v of VIEWS) await page.evaluate((id) => { const e = document.getElementById(id); e.scrollIntoView(); return e.snapshot(); }, `e-${v}`);
  await settle(page);
  await page.evaluate(() => scrollTo(0, 0));
  return { page, frames, errors };
}

/** Two animation frames: uPlot draws in a microtask after setData, a transition's end within a frame. */
const settle = (target) => target.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(r, 30)))));

/** axe-core's contrast violations and any other serious or critical one, in a page or a frame as it is now. */
async function axeProblems(target) {
  await target.evaluate(AXE);
  const result = await target.evaluate(() => window.axe.run(document, { iframes: false, resultTypes: ['violations'] }));
  return result.violations.filter((v) => v.id === 'color-contrast' || v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => `${n.target.join(' ')} ${n.any?.[0]?.message ?? ''}`).join(' | ')}`);
}

/** What makes a figure's look dark or light: its background, its text, its charts' axes. */
async function lookOfElement(page, id) {
  return page.evaluate((id) => {
    const el = document.getElementById(id), th = window.__th;
    const u = el.charts?.spectrum.chart;
    // the figure's own background (not the page's showing through) and its text
    const box = el.shadowRoot.querySelector('.box'), own = th.parse(getComputedStyle(box).backgroundColor);
    return { bg: own.a > 0.99 ? th.lum(own) : -1, fg: th.lum(th.parse(getComputedStyle(box).color)), axis: u ? th.lum(th.parse(u.axes[0].stroke(u, 0))) : null };
  }, id);
}
async function lookOfFrame(frame) {
  return frame.evaluate(() => {
    const th = window.__th, u = window.attnviz.charts?.spectrum.chart;
    return { bg: th.lum(th.bgUnder(document.body)), fg: th.lum(th.parse(getComputedStyle(document.body).color)), axis: u ? th.lum(th.parse(u.axes[0].stroke(u, 0))) : null };
  });
}
/** 'dark', 'light' or 'mixed' (relative luminances: a dark background, light text and light axes; or the reverse). */
function kind({ bg, fg, axis }) {
  if (bg < 0.05 && fg > 0.6 && (axis === null || axis > 0.5)) return 'dark';
  if (bg > 0.85 && fg < 0.05 && (axis === null || axis < 0.1)) return 'light';
  return `mixed ${JSON.stringify({ bg, fg, axis })}`;
}
const DARK = 'dark', LIGHT = 'light';

describe('embeds in a light and a dark blog, at 700 and 360 px', () => {
  for (const theme of ['light', 'dark']) {
    for (const width of [732, 360]) {
      it(`${theme} at ${width} px: axe clean; axes, legends and colour bars readable on what is under them`, async () => {
        const { page, frames, errors } = await open(theme, width);
        const shot = `build/e2e/embed-theme-${theme}-${width === 732 ? 700 : 360}.png`;
        await page.screenshot({ path: shot, fullPage: true });
        expect(await axeProblems(page), 'the post and its elements').toEqual([]);
        for (const v of VIEWS) expect(await axeProblems(frames[v]), `the ${v} frame`).toEqual([]);
        // the look follows the blog: the iframes by their link's theme=, the elements by the host's color-scheme
        const look = theme === 'dark' ? DARK : LIGHT;
        for (const v of VIEWS) {
          expect(kind(await lookOfElement(page, `e-${v}`)), `element ${v}`).toBe(look);
          expect(kind(await lookOfFrame(frames[v])), `frame ${v}`).toBe(look);
        }
        // the charts' axes: the stroke uPlot draws them in and the text actually drawn, ≥ 4.5:1 on the background
        // under the chart; the legends' text too
        const charts = [
          ['element', await page.evaluate(() => { const c = document.getElementById('e-spectrum').charts; return [window.__th.chart(c.spectrum.chart), window.__th.chart(c.error.chart)]; })],
          ['frame', await frames.spectrum.evaluate(() => { const c = window.attnviz.charts; return [window.__th.chart(c.spectrum.chart), window.__th.chart(c.error.chart)]; })],
        ];
        for (const [where, pair] of charts) {
          for (const c of pair) {
            for (const x of c.axis) expect(x, `${where} axis stroke ${c.strokes}`).toBeGreaterThanOrEqual(4.5);
            expect(c.drawn, `${where} axis text drawn`).toBeGreaterThanOrEqual(4.5);
            expect(c.legend.length).toBeGreaterThan(0);
            for (const x of c.legend) expect(x, `${where} legend`).toBeGreaterThanOrEqual(4.5);
          }
        }
        // the colour bars' labels (HTML beside a canvas): axe checks them too; here, with the figure's own colours
        const cbar = await page.evaluate(() => [...document.getElementById('e-heatmap').shadowRoot.querySelectorAll('.cbar .t')]
          .map((s) => window.__th.contrast(window.__th.parse(getComputedStyle(s).color), window.__th.bgUnder(s))));
        expect(cbar.length).toBe(6);
        for (const x of cbar) expect(x).toBeGreaterThanOrEqual(4.5);
        // the readouts frame's entropy histogram: its axis text drawn on the frame's background
        const ent = await frames.readouts.evaluate(() => {
          const c = document.getElementById('ent-hist'), th = window.__th, bg = th.bgUnder(c);
          const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
          let best = 1;
          for (let i = 0; i < d.length; i += 4) { const a = d[i + 3] / 255; if (a) best = Math.max(best, th.contrast({ r: a * d[i] + (1 - a) * bg.r, g: a * d[i + 1] + (1 - a) * bg.g, b: a * d[i + 2] + (1 - a) * bg.b }, bg)); }
          return best;
        });
        expect(ent).toBeGreaterThanOrEqual(4.5);
        expect(errors).toEqual([]);
        await page.close();
      }, 120000);
    }
  }

  it("the charts' mark colour (text beside the ceiling and uniform lines) is readable in both themes", () => {
    const hex6 = (h) => (h.length === 4 ? `#${[...h.slice(1)].map((x) => x + x).join('')}` : h);
    const lum = (h) => { h = hex6(h); const c = [1, 3, 5].map((i) => parseInt(h.slice(i, i + 2), 16) / 255).map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4)); return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]; };
    const ratio = (a, b) => (Math.max(lum(a), lum(b)) + 0.05) / (Math.min(lum(a), lum(b)) + 0.05);
    // the page's backgrounds and panels (style.css) and the element's (embed.css)
    for (const bg of ['#fbfbfa', '#ffffff']) { expect(ratio(themeColors(false).mark, bg)).toBeGreaterThanOrEqual(4.5); expect(ratio(themeColors(false).axis, bg)).toBeGreaterThanOrEqual(4.5); }
    for (const bg of ['#15181d', '#1c2027']) { expect(ratio(themeColors(true).mark, bg)).toBeGreaterThanOrEqual(4.5); expect(ratio(themeColors(true).axis, bg)).toBeGreaterThanOrEqual(4.5); }
  });
});

describe('every way to ask for the dark look gives it, and a switch redraws the charts', () => {
  it('theme=dark in a link, the theme attribute, attnviz:set {theme} and auto under a dark host', async () => {
    const { page, frames, errors } = await open('light', 732);
    // the light blog: its frames and elements are light
    expect(kind(await lookOfFrame(frames.spectrum))).toBe(LIGHT);
    expect(kind(await lookOfElement(page, 'e-spectrum'))).toBe(LIGHT);
    const jobs = await page.evaluate(() => document.getElementById('e-spectrum').view.job);
    const drawn = () => page.evaluate(() => window.__th.chart(document.getElementById('e-spectrum').charts.spectrum.chart));
    const before = await drawn();

    // 1. the element's theme attribute: dark at once, the charts drawn again, nothing computed
    await page.evaluate(() => document.getElementById('e-spectrum').setAttribute('theme', 'dark'));
    await settle(page);
    expect(kind(await lookOfElement(page, 'e-spectrum'))).toBe(DARK);
    const after = await drawn();
    expect(after.bgLum).toBeLessThan(0.05);
    expect(after.drawn).toBeGreaterThanOrEqual(4.5); // the axes' text redrawn light on the dark background
    expect(before.drawn).toBeGreaterThanOrEqual(4.5);
    expect(await page.evaluate(() => document.getElementById('e-spectrum').view.job)).toBe(jobs);
    await page.locator('#e-spectrum').screenshot({ path: 'build/e2e/embed-theme-attribute-dark.png' });
    // a value that is none of the three is said under the figure, and the element follows the page
    await page.evaluate(() => document.getElementById('e-spectrum').setAttribute('theme', 'purple'));
    await settle(page);
    expect(await page.evaluate(() => document.getElementById('e-spectrum').shadowRoot.querySelector('.msg').textContent))
      .toBe('theme "purple" is not one of auto, light, dark: following the page (auto)');
    expect(kind(await lookOfElement(page, 'e-spectrum'))).toBe(LIGHT);
    await page.evaluate(() => document.getElementById('e-spectrum').removeAttribute('theme'));
    await settle(page);
    expect(await page.evaluate(() => document.getElementById('e-spectrum').shadowRoot.querySelector('.msg').textContent)).toBe('');
    expect(kind(await lookOfElement(page, 'e-spectrum'))).toBe(LIGHT);

    // 2. auto: the host's color-scheme switched at run time (a blog's theme toggle) reaches every element
    //    without a theme attribute, and their charts are drawn again (no attribute of theirs changed)
    await page.evaluate(() => document.getElementById('e-heatmap').setAttribute('theme', 'light'));
    await page.evaluate(() => document.documentElement.classList.add('dark'));
    await settle(page);
    expect(kind(await lookOfElement(page, 'e-spectrum'))).toBe(DARK);
    const toggled = await drawn();
    expect(toggled.bgLum).toBeLessThan(0.05);
    expect(toggled.drawn).toBeGreaterThanOrEqual(4.5);
    expect(kind(await lookOfElement(page, 'e-readouts'))).toBe(DARK);
    expect(kind(await lookOfElement(page, 'e-heatmap'))).toBe(LIGHT); // theme="light" wins
    await page.evaluate(() => document.getElementById('e-heatmap').removeAttribute('theme'));
    await settle(page);
    expect(kind(await lookOfElement(page, 'e-heatmap'))).toBe(DARK);
    expect(await page.evaluate(() => document.getElementById('e-spectrum').view.job)).toBe(jobs);
    // the host's custom properties win over the theme's colours, the charts' axes included
    await page.addStyleTag({ content: 'attn-viz { --attnviz-fg: #ffd27f; --attnviz-bg: #202a20; }' });
    await settle(page);
    expect(await page.evaluate(() => document.getElementById('e-spectrum').charts.spectrum.chart.axes[0].stroke())).toBe('rgb(255, 210, 127)');
    expect(await page.evaluate(() => getComputedStyle(document.getElementById('e-heatmap').shadowRoot.querySelector('.box')).backgroundColor)).toBe('rgb(32, 42, 32)');
    expect(await axeProblems(page)).toEqual([]);
    await page.screenshot({ path: 'build/e2e/embed-theme-auto-switched.png', fullPage: true });

    // 3. attnviz:set {theme: 'dark'} to the light spectrum frame: dark, charts redrawn, the link keeps it
    await page.$eval('#f-spectrum', (f) => f.scrollIntoView()); // a frame off screen runs no animation frame
    expect(await frames.spectrum.evaluate(() => document.documentElement.dataset.theme)).toBe('light');
    await page.evaluate(() => window.ask('f-spectrum', { type: 'attnviz:set', state: { theme: 'dark' } }));
    await frames.spectrum.waitForFunction(() => document.documentElement.dataset.theme === 'dark');
    await frames.spectrum.evaluate(() => window.attnviz.snapshot());
    await settle(frames.spectrum);
    expect(kind(await lookOfFrame(frames.spectrum))).toBe(DARK);
    const fc = await frames.spectrum.evaluate(() => window.__th.chart(window.attnviz.charts.spectrum.chart));
    expect(fc.drawn).toBeGreaterThanOrEqual(4.5);
    expect(fc.bgLum).toBeLessThan(0.05);
    expect(await frames.spectrum.evaluate(() => location.hash)).toMatch(/&theme=dark(&|$)/);
    const snap = await frames.spectrum.evaluate(() => window.attnviz.snapshot());
    expect(snap.state.theme).toBeUndefined(); // the snapshot is the same in every theme
    expect(await axeProblems(frames.spectrum)).toEqual([]);
    // …and back to auto: the frame follows the reader's system (light here)
    await page.evaluate(() => window.ask('f-spectrum', { type: 'attnviz:set', state: { theme: 'auto' } }));
    await frames.spectrum.waitForFunction(() => document.documentElement.dataset.theme === 'auto');
    await frames.spectrum.evaluate(() => window.attnviz.snapshot());
    expect(kind(await lookOfFrame(frames.spectrum))).toBe(LIGHT);
    // theme=auto follows the system's preference as it changes, the charts included
    await page.emulateMedia({ colorScheme: 'dark' });
    await settle(frames.spectrum);
    await frames.spectrum.evaluate(() => window.attnviz.snapshot());
    await settle(frames.spectrum);
    expect(kind(await lookOfFrame(frames.spectrum))).toBe(DARK);
    const sys = await frames.spectrum.evaluate(() => window.__th.chart(window.attnviz.charts.spectrum.chart));
    expect(sys.bgLum).toBeLessThan(0.05);
    expect(sys.drawn).toBeGreaterThanOrEqual(4.5); // drawn again: the light theme's dark axes would be 1.4:1 here
    await page.emulateMedia({ colorScheme: 'light' });

    // 4. theme=dark in a frame's link: the dark blog's frames (above) and a frame navigated to such a link
    await page.$eval('#f-heatmap', (f) => f.scrollIntoView());
    await frames.heatmap.evaluate(() => { location.hash = `${location.hash.slice(1)}&theme=dark`; });
    await frames.heatmap.waitForFunction(() => document.documentElement.dataset.theme === 'dark');
    await frames.heatmap.evaluate(() => window.attnviz.snapshot());
    expect(kind(await lookOfFrame(frames.heatmap))).toBe(DARK);
    expect(await axeProblems(frames.heatmap)).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  }, 120000);

  it("the full lab's links still leave the theme to the reader", async () => {
    const page = await browser.context.newPage();
    await page.goto(`${lab.url}#v=1&n=64&theme=dark`);
    await page.waitForFunction(() => window.attnviz?.ready);
    await page.evaluate(() => window.attnviz.snapshot());
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('auto');
    expect(await page.evaluate(() => location.hash)).not.toMatch(/theme/);
    await page.close();
  }, 60000);
});

// Review of the merged issue-32 branches: what the element does before its module loads, off screen, and
// as a bundled component.
describe('the element before its module, off screen, and with lab=', () => {
  /** A page on the host's origin with `body`; the wasm held back `wasmDelay` ms. */
  async function page(name, body, { wasmDelay = 0 } = {}) {
    writeFileSync(join(hostDir, name), `<!doctype html><html lang="en"><meta charset="utf-8"><title>a post</title><link rel="icon" href="data:,">
<script type="module" src="${lab.url}embed.js"></script>${body}</html>`);
    const p = await browser.context.newPage();
    const errors = [];
    p.on('pageerror', (e) => errors.push(String(e)));
    if (wasmDelay) await p.route('**/*.wasm', async (r) => { await new Promise((s) => setTimeout(s, wasmDelay)); await r.continue(); });
    await p.goto(`${host.url}${name}`);
    await p.waitForFunction(() => customElements.get('attn-viz'));
    return { p, errors };
  }

  it('is dark on a dark host from its first paint, while the module still loads', async () => {
    const { p, errors } = await page('dark-early.html', '<style>:root { color-scheme: dark; background: #111; }</style><attn-viz id="e" n="64" view="heatmap"></attn-viz>', { wasmDelay: 1500 });
    const early = await p.evaluate(() => {
      const r = document.getElementById('e').shadowRoot;
      return { loading: r.querySelector('.msg').textContent, dark: r.querySelector('.box').classList.contains('dark'), href: r.querySelector('.open').hasAttribute('href') };
    });
    expect(early.loading).toMatch(/loading/);
    expect(early.dark).toBe(true);
    expect(early.href).toBe(false); // no dead link before the module
    await p.evaluate(() => document.getElementById('e').snapshot());
    expect(errors).toEqual([]);
    await p.close();
  });

  it('snapshot() of an element off screen settles when asked again for the same state, and leaves it off screen', async () => {
    const { p, errors } = await page('offscreen.html', `<div style="height: 4000px">prose</div><attn-viz id="e" n="64" view="heatmap" variant="elu" p="3"></attn-viz>`);
    await p.evaluate(() => document.getElementById('e').snapshot());
    const again = await p.evaluate(async () => {
      const e = document.getElementById('e');
      e.setAttribute('p', '4'); e.setAttribute('p', '3'); // the same state as the one answered
      const r = await Promise.race([e.snapshot().then(() => 'settled'), new Promise((s) => setTimeout(() => s('hung'), 10000))]);
      return { r, visible: e.visible };
    });
    expect(again).toEqual({ r: 'settled', visible: false });
    expect(errors).toEqual([]);
    await p.close();
  });

  it('"open in attnviz" leads beside embed.js, or to the lab its lab attribute names', async () => {
    const { p } = await page('lab-attr.html', '<attn-viz id="a" n="64" view="heatmap"></attn-viz><attn-viz id="b" n="64" view="heatmap" lab="https://example.org/attnviz/"></attn-viz>');
    await p.evaluate(() => Promise.all(['a', 'b'].map((id) => document.getElementById(id).snapshot())));
    const href = (id) => p.evaluate((id) => document.getElementById(id).shadowRoot.querySelector('.open').getAttribute('href'), id);
    expect(await href('a')).toMatch(new RegExp(`^${lab.url}#`));
    expect(await href('b')).toMatch(/^https:\/\/example\.org\/attnviz\/#/);
    expect(await p.evaluate(() => document.getElementById('b').shadowRoot.querySelector('.msg').textContent)).toBe(''); // lab is no unknown key
    await p.close();
  });
});
