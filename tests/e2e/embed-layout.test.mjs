// Embedded figures that belong in a post (issue 32, items 2 and 3, the layout part), in Debian's headless
// Chromium, on a host page of another origin (a second server, as tests/e2e/embed.test.mjs does):
//   - no layout shift: an <attn-viz> holds its final size from the moment embed.js runs (its stylesheet
//     adopted in its constructor, each view's height from its width), measured as the page's cumulative
//     layout shift (PerformanceObserver 'layout-shift', buffered) with embed.js held back 400 ms;
//   - ordinary HTML and ARIA attributes pass through silently; a title or aria-label names the figure;
//   - nothing clipped from 320 px up (no overflow-hidden box scrolled, no text past the element's box);
//   - the iframe embed: height=auto posts its content height to the parent, and every view fills or
//     fits its frame at 700×420, 360×420 and 700×700.
// Screenshots: build/e2e/embed-layout-*.png.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync, mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '../../scripts/serve.mjs';
import { launch } from './browser.mjs';

const ROOT = 'build/web';
let lab, host, hostDir, browser, pageNo = 0;

beforeAll(async () => {
  if (!existsSync(`${ROOT}/index.html`)) throw new Error('run `make web` first');
  await mkdir('build/e2e', { recursive: true });
  lab = await serve(ROOT, 0, { headers: { 'Access-Control-Allow-Origin': '*' } });
  hostDir = mkdtempSync(join(tmpdir(), 'attnviz-layout-'));
  host = await serve(hostDir, 0);
  browser = await launch({ width: 1000, height: 800 });
});

afterAll(async () => {
  await browser?.close();
  await lab?.close();
  await host?.close();
  if (hostDir) rmSync(hostDir, { recursive: true, force: true });
});

// the layout shifts of the page so far (the Web Vitals rule: those without recent input), collected from
// the start by a script before anything else
const CLS_PROBE = `<script>window.cls = 0; window.shifts = [];
new PerformanceObserver((l) => { for (const e of l.getEntries()) if (!e.hadRecentInput) { cls += e.value; shifts.push(e.value); } })
  .observe({ type: 'layout-shift', buffered: true });</script>`;

/**
 * A blog post on the host's origin: prose in a column `width` px wide, `body` in it. `script`: the
 * module script's attributes; `delay`: embed.js held back that long (ms), so the host page paints
 * first, as on a slow network. Returns {page, errors} once every element's snapshot() has settled.
 */
async function post(body, { width = 700, viewport = null, script = '', head = '', delay = 0 } = {}) {
  const name = `post-${pageNo += 1}.html`;
  writeFileSync(join(hostDir, name), `<!doctype html><html lang="en"><meta charset="utf-8"><title>a post</title><link rel="icon" href="data:,">
${CLS_PROBE}${head}
<script type="module" ${script} src="${lab.url}embed.js"></script>
<body style="margin: 8px; font: 17px/1.5 Georgia, serif"><main style="width: ${width}px">
<p>Some prose before the figure, as a blog post has.</p>
${body}
${'<p>More prose after the figure, which must not move while the figure loads.</p>'.repeat(12)}
</main></body></html>`);
  const page = await browser.context.newPage();
  await page.setViewportSize(viewport ?? { width: width + 40, height: 800 });
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  if (delay) await page.route('**/embed.js', async (r) => { await new Promise((s) => setTimeout(s, delay)); await r.continue(); });
  await page.goto(`${host.url}${name}`);
  await page.waitForFunction(() => customElements.get('attn-viz'));
  await page.evaluate(() => Promise.all([...document.querySelectorAll('attn-viz')].map((e) => e.snapshot())));
  return { page, errors };
}

/** The page's cumulative layout shift once everything has drawn (two frames after the last result). */
async function cls(page) {
  await page.waitForTimeout(300);
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  return page.evaluate(() => window.cls);
}

const VIEWS = {
  heatmap: 'view="heatmap" variant="focused" p="3"',
  spectrum: 'view="spectrum" variant="elu" d="16"',
  readouts: 'view="readouts" variant="performer" m="64"',
  controls: 'view="heatmap" variant="performer" m="64" controls="n,d,seed,variant,m"',
  spectrumControls: 'view="spectrum" variant="focused" p="3" controls="p"',
};

describe('<attn-viz> holds its final size before the module and the wasm load', () => {
  for (const width of [700, 360]) {
    it(`at ${width} px: each view shifts nothing (CLS < 0.01) with a render-blocking script`, async () => {
      const measured = {};
      for (const [name, attrs] of Object.entries(VIEWS)) {
        const { page, errors } = await post(`<attn-viz n="64" ${attrs}></attn-viz>`, { width, script: 'blocking="render"', delay: 400 });
        measured[name] = await cls(page);
        await page.screenshot({ path: `build/e2e/embed-layout-cls-${name}-${width}.png` });
        expect(errors).toEqual([]);
        await page.close();
      }
      console.log(`CLS at ${width} px, blocking="render", embed.js 400 ms late:`, JSON.stringify(measured));
      for (const [name, v] of Object.entries(measured)) expect(v, name).toBeLessThan(0.01);
    });
  }

  it('without blocking="render", the documented host CSS holds the room until embed.js runs', async () => {
    const measured = {};
    for (const width of [700, 360]) {
      for (const [name, attrs] of Object.entries(VIEWS).filter(([k]) => !/ontrols/.test(k))) {
        // the snippet of docs/embedding.md, "No layout shift"
        const head = `<style>${HOST_CSS}</style>`;
        const bare = await post(`<attn-viz n="64" ${attrs}></attn-viz>`, { width, delay: 400 });
        const held = await post(`<attn-viz n="64" ${attrs}></attn-viz>`, { width, head, delay: 400 });
        measured[`${name}@${width}`] = { bare: await cls(bare.page), css: await cls(held.page) };
        await bare.page.close();
        await held.page.close();
      }
    }
    console.log('CLS with embed.js 400 ms late, without and with the host CSS:', JSON.stringify(measured));
    for (const [name, v] of Object.entries(measured)) expect(v.css, name).toBeLessThan(0.01);
  });
});

// docs/embedding.md's host CSS for the moment before embed.js runs, for browsers without blocking="render"
// (an undefined element is an empty inline box): each view's height for an element as wide as its column
const HOST_CSS = `
attn-viz:not(:defined) { display: block; padding-top: calc((100% - 307px) / 3 + 24px); }
attn-viz[view=spectrum]:not(:defined) { padding-top: 423px; }
attn-viz[view=readouts]:not(:defined) { padding-top: 364px; }
@media (max-width: 580px) {
  attn-viz:not(:defined) { padding-top: calc(3 * (100% - 92px) + 70px); }
  attn-viz[view=spectrum]:not(:defined) { padding-top: 423px; }
  attn-viz[view=readouts]:not(:defined) { padding-top: 722px; }
}`;

describe('<attn-viz> takes the host page\'s own attributes', () => {
  it('title, role, tabindex, lang, loading, aria-*, data-*, on* pass through silently; a title or aria-label names the figure', async () => {
    const { page, errors } = await post(`
<attn-viz id="t" n="64" view="heatmap" variant="elu" title="Linear attention, elu+1" tabindex="0" loading="lazy" lang="en"
  class="wide" data-note="x" aria-describedby="cap" onclick="void 0" slot="s" part="p" hidden-not="1"></attn-viz>
<p id="cap">The heatmaps of elu+1 attention.</p>
<attn-viz id="a" n="64" view="readouts" variant="elu" aria-label="Readouts of elu+1" role="group" style="display: block"></attn-viz>
<attn-viz id="plain" n="64" view="spectrum" variant="elu"></attn-viz>`);
    const msg = (id) => page.evaluate((id) => document.getElementById(id).shadowRoot.querySelector('.msg').textContent, id);
    // HTML's own attributes are not link keys; a name that is neither is still reported
    expect(await msg('t')).toBe('unknown parameter "hidden-not" ignored');
    expect(await msg('a')).toBe('');
    expect(await msg('plain')).toBe('');
    // the accessible names: a figure named by its title, a group (the host's role) by its aria-label
    expect(await page.getByRole('figure', { name: 'Linear attention, elu+1' }).count()).toBe(1);
    expect(await page.getByRole('group', { name: 'Readouts of elu+1' }).count()).toBe(1);
    const tree = await page.locator('main').ariaSnapshot();
    expect(tree).toMatch(/- figure "Linear attention, elu\+1"/);
    expect(tree).toMatch(/- group "Readouts of elu\+1"/);
    // a change of a host attribute computes nothing again
    const job = await page.evaluate(() => document.getElementById('a').view.job);
    await page.evaluate(() => { const a = document.getElementById('a'); a.setAttribute('aria-label', 'Readouts'); a.title = 'x'; a.classList.add('y'); });
    await page.evaluate(() => new Promise((r) => setTimeout(r, 100)));
    expect(await page.evaluate(() => document.getElementById('a').view.job)).toBe(job);
    expect(await page.getByRole('group', { name: 'Readouts' }).count()).toBe(1);
    expect(await msg('a')).toBe('');
    expect(errors).toEqual([]);
    await page.close();
  });
});

/**
 * What is cut inside `root` (a document or a shadow root) within the box `box` ({left, right}): elements
 * whose overflow is hidden or clipped with content wider or taller than they are, and text whose glyphs
 * run past the box (each as "tag.class: text"). Scrolling boxes (overflow auto) are not cut.
 */
function cutIn(root, box) {
  const name = (el) => `${el.tagName.toLowerCase()}${el.className && typeof el.className === 'string' ? `.${el.className.split(' ')[0]}` : ''}`;
  const out = [];
  for (const el of root.querySelectorAll('*')) {
    if (!el.getClientRects().length) continue;
    const cs = getComputedStyle(el);
    const hides = (v) => v === 'hidden' || v === 'clip';
    if ((hides(cs.overflowX) && el.scrollWidth > el.clientWidth + 1) || (hides(cs.overflowY) && el.scrollHeight > el.clientHeight + 1 && el.tagName !== 'TD')) {
      out.push(`${name(el)} overflows (${el.scrollWidth}×${el.scrollHeight} in ${el.clientWidth}×${el.clientHeight})`);
    }
  }
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (!n.textContent.trim() || !n.parentElement?.getClientRects().length) continue;
    const range = document.createRange();
    range.selectNodeContents(n);
    for (const r of range.getClientRects()) {
      if (r.width && (r.right > box.right + 0.5 || r.left < box.left - 0.5)) { out.push(`${name(n.parentElement)}: "${n.textContent.trim().slice(0, 30)}" at ${Math.round(r.left)}–${Math.round(r.right)} outside ${Math.round(box.left)}–${Math.round(box.right)}`); break; }
    }
  }
  return out;
}

describe('nothing clipped from 320 px up', () => {
  it('every view of <attn-viz> at 320, 360 and 700 px: no overflow hidden, no text past the element', async () => {
    const cut = {};
    for (const width of [320, 360, 700]) {
      const els = Object.entries(VIEWS).map(([name, attrs]) => `<attn-viz id="${name}" n="64" ${attrs}></attn-viz>
<attn-viz id="${name}-zh" lang="zh" n="64" ${attrs}></attn-viz>`).join('\n');
      const { page, errors } = await post(els, { width, viewport: { width: width + 40, height: 6000 } });
      await page.evaluate(() => new Promise((r) => setTimeout(r, 300)));
      Object.assign(cut, Object.fromEntries(Object.entries(await page.evaluate(`(() => {
        const cutIn = ${cutIn};
        return Object.fromEntries([...document.querySelectorAll('attn-viz')].map((e) => [e.id, cutIn(e.shadowRoot, e.getBoundingClientRect())]));
      })()`)).map(([k, v]) => [`${k}@${width}`, v])));
      for (const id of Object.keys(VIEWS)) await page.locator(`#${id}`).screenshot({ path: `build/e2e/embed-layout-element-${id}-${width}.png` });
      expect(errors).toEqual([]);
      await page.close();
    }
    expect(Object.fromEntries(Object.entries(cut).filter(([, v]) => v.length))).toEqual({});
  });
});
