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
import { existsSync, mkdtempSync, writeFileSync, rmSync, readFileSync } from 'node:fs';
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
    expect(HOST_CSS).toMatch(/padding-top/); // the snippet was found in the docs
    console.log('CLS with embed.js 400 ms late, without and with the host CSS:', JSON.stringify(measured));
    for (const [name, v] of Object.entries(measured)) expect(v.css, name).toBeLessThan(0.01);
  });
});

// docs/embedding.md's host CSS for the moment before embed.js runs, for browsers without blocking="render"
// (an undefined element is an empty inline box): each view's height for an element as wide as its column
const HOST_CSS = /```css\n(attn-viz:not\(:defined\)[\s\S]*?)```/.exec(readFileSync('docs/embedding.md', 'utf8'))?.[1] ?? '';

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
    // a box past the edge (a heatmap row 379 px wide in a 360-px element), unless a scroller holds it
    const r = el.getBoundingClientRect();
    const scroller = el.parentElement?.closest('td'); // a formula wider than its cell scrolls in it
    if (r.width && !scroller && (r.right > box.right + 0.5 || r.left < box.left - 0.5)) out.push(`${name(el)} at ${Math.round(r.left)}–${Math.round(r.right)} outside ${Math.round(box.left)}–${Math.round(box.right)}`);
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

// docs/embedding.md, "Auto-height": the host's snippet that sizes the frame to the figure
const AUTO_HEIGHT_JS = /with `\/js\/attnviz-height\.js`:\n\n```js\n([\s\S]*?)```/.exec(readFileSync('docs/embedding.md', 'utf8'))?.[1] ?? '';
const AUTO_HEIGHT_SNIPPET = `<script>${AUTO_HEIGHT_JS}</script>`; // the host's file, inline here (no CSP on this host)

/** A post with the lab in a `w`×`h` iframe at `hash` (with `extra` in the page); waits until it has settled. */
async function framed(hash, { w = 700, h = 420, extra = '', sweep = false } = {}) {
  const name = `frame-${pageNo += 1}.html`;
  writeFileSync(join(hostDir, name), `<!doctype html><html lang="en"><meta charset="utf-8"><title>a post</title><link rel="icon" href="data:,">
<body style="margin: 8px; font: 17px/1.5 Georgia, serif"><main style="width: ${w}px">
<p>Some prose before the figure.</p>
<iframe id="fig" width="${w}" height="${h}" style="border: 0; display: block" title="a figure" src="${lab.url}#${hash}"></iframe>
${'<p>More prose after the figure.</p>'.repeat(40)}
</main>
<script>window.heights = []; addEventListener('message', (e) => { if (e.data?.type === 'attnviz:height') heights.push({ origin: e.origin, height: e.data.height }); });</script>
${extra}</body></html>`);
  const page = await browser.context.newPage();
  await page.setViewportSize({ width: w + 40, height: 900 });
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${host.url}${name}`);
  const frame = await (await page.$('#fig')).contentFrame();
  await frame.waitForFunction(() => window.attnviz?.ready, null, { timeout: 30000 });
  await frame.evaluate(() => window.attnviz.snapshot());
  if (sweep) await frame.evaluate(() => window.attnviz.sweep());
  await page.waitForTimeout(300);
  return { page, frame, errors };
}

const FRAME_VIEWS = {
  heatmap: 'v=1&variant=focused&p=3&n=64&embed=heatmap&controls=p',
  'heatmap-zh': 'v=1&variant=focused&p=3&n=64&embed=heatmap&controls=p,variant&lang=zh',
  'heatmap-bare': 'v=1&variant=elu&n=64&embed=heatmap',
  spectrum: 'v=1&variant=elu&d=16&n=64&embed=spectrum',
  'spectrum-zh': 'v=1&variant=elu&d=16&n=64&embed=spectrum&controls=d&lang=zh',
  readouts: 'v=1&variant=performer&m=64&n=64&embed=readouts',
  sweep: 'v=1&variant=performer&n=64&embed=sweep&sweep=m',
};

describe('the iframe embed fills or fits the frame it is given', () => {
  it('every view at 700×420, 360×420 and 700×700: nothing scrolls the frame or is cut; heatmaps use the height', async () => {
    const seen = {}, cut = {};
    for (const [w, h] of [[700, 420], [360, 420], [700, 700]]) {
      for (const [name, hash] of Object.entries(FRAME_VIEWS)) {
        const { page, frame, errors } = await framed(hash, { w, h, sweep: name === 'sweep' });
        const r = await frame.evaluate(`(() => {
          const cutIn = ${cutIn};
          const de = document.documentElement;
          const shown = [...document.querySelectorAll('.lab > *')].filter((e) => e.getClientRects().length);
          const read = document.querySelector('.readouts');
          return {
            over: [de.scrollWidth - innerWidth, de.scrollHeight - innerHeight],
            used: Math.round(Math.max(...shown.map((e) => e.getBoundingClientRect().bottom))),
            hm: Math.round(document.getElementById('hm-M').getBoundingClientRect().width),
            readScrolls: getComputedStyle(read).overflowY === 'auto' && read.scrollHeight > read.clientHeight,
            cut: cutIn(document, { left: 0, right: innerWidth }),
          };
        })()`);
        seen[`${name}@${w}x${h}`] = { over: r.over, used: r.used, hm: r.hm, readScrolls: r.readScrolls };
        if (r.cut.length) cut[`${name}@${w}x${h}`] = r.cut;
        await page.locator('#fig').screenshot({ path: `build/e2e/embed-layout-frame-${name}-${w}x${h}.png` });
        expect(errors, name).toEqual([]);
        await page.close();
      }
    }
    console.log('iframe views (over: the frame\'s scroll beyond it; used: the figure\'s bottom, px):', JSON.stringify(seen));
    for (const [k, v] of Object.entries(seen)) expect(v.over, k).toEqual([0, 0]);
    expect(cut).toEqual({});
    // the heatmaps grow with the frame: most of its height used where it is wide (it was ~200 px of 420,
    // and 123-px heatmaps in a 700-px-tall frame)
    for (const k of ['heatmap@700x420', 'heatmap-bare@700x420']) expect(seen[k].used, k).toBeGreaterThan(0.85 * 420);
    for (const k of ['heatmap@700x700', 'heatmap-bare@700x700']) expect(seen[k].hm, k).toBeGreaterThan(200);
    // the readouts scroll inside the frame where they do not fit
    expect(seen['readouts@360x420'].readScrolls).toBe(true);
  });

  it('a wheel over the spectrum scrolls the post at the first tick, not the frame', async () => {
    const { page, frame, errors } = await framed(FRAME_VIEWS.spectrum, { w: 360, h: 420 });
    const box = await (await frame.$('#chart-spectrum')).boundingBox();
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.mouse.wheel(0, 120);
    await page.waitForTimeout(300);
    expect(await page.evaluate(() => scrollY)).toBeGreaterThan(0);
    expect(await frame.evaluate(() => scrollY)).toBe(0);
    expect(errors).toEqual([]);
    await page.close();
  });
});

describe('height=auto: the iframe tells its host its height', () => {
  it('posts attnviz:height on load and on every change of size; the documented snippet sizes the frame to it', async () => {
    const { page, frame, errors } = await framed('v=1&variant=focused&p=3&n=64&embed=heatmap&controls=p&height=auto', { w: 700, h: 150, extra: AUTO_HEIGHT_SNIPPET });
    expect(AUTO_HEIGHT_JS).toMatch(/attnviz:height/); // the snippet was found in the docs
    await page.waitForFunction(() => window.heights.length > 0);
    const first = await page.evaluate(() => window.heights.at(-1));
    expect(first.origin).toBe(lab.url.replace(/\/$/, ''));
    const content = await frame.evaluate(() => Math.ceil(document.documentElement.getBoundingClientRect().height));
    expect(first.height).toBe(content);
    expect(await page.$eval('#fig', (f) => f.height)).toBe(String(content));
    // the frame shows it all: nothing to scroll inside
    expect(await frame.evaluate(() => document.documentElement.scrollHeight - innerHeight)).toBe(0);
    await page.locator('#fig').screenshot({ path: 'build/e2e/embed-layout-frame-auto-700.png' });
    // a change of view changes the height, and the host hears of it
    const from = await page.evaluate(() => window.heights.length);
    await frame.evaluate(() => { location.hash = 'v=1&variant=elu&d=16&n=64&embed=spectrum&height=auto'; });
    await frame.evaluate(() => window.attnviz.snapshot());
    await page.waitForFunction((i) => window.heights.length > i, from);
    await page.waitForTimeout(300);
    const after = await page.evaluate(() => window.heights.at(-1).height);
    expect(after).not.toBe(first.height);
    expect(after).toBe(await frame.evaluate(() => Math.ceil(document.documentElement.getBoundingClientRect().height)));
    // a narrow frame: the heatmaps one a row, as tall as the width allows, all shown
    await page.$eval('#fig', (f) => { f.width = '360'; });
    await frame.evaluate(() => { location.hash = 'v=1&variant=elu&n=64&embed=heatmap&height=auto'; });
    await frame.evaluate(() => window.attnviz.snapshot());
    await page.waitForTimeout(500);
    expect(await frame.evaluate(() => [document.documentElement.scrollWidth - innerWidth, document.documentElement.scrollHeight - innerHeight])).toEqual([0, 0]);
    await page.locator('#fig').screenshot({ path: 'build/e2e/embed-layout-frame-auto-360.png' });
    // the snapshot is the same with and without height=auto
    const s = await frame.evaluate(() => window.attnviz.snapshot());
    expect(Object.keys(s.state)).not.toContain('height');
    expect(errors).toEqual([]);
    await page.close();
  });

  it('without height=auto nothing is posted; with host= naming another origin the host hears nothing', async () => {
    const plain = await framed('v=1&variant=elu&n=64&embed=heatmap', { w: 700, h: 420 });
    const other = await framed('v=1&variant=elu&n=64&embed=heatmap&height=auto&host=https://blog.example', { w: 700, h: 420 });
    await other.page.waitForTimeout(300);
    expect(await plain.page.evaluate(() => window.heights)).toEqual([]);
    expect(await other.page.evaluate(() => window.heights)).toEqual([]);
    await plain.page.close();
    await other.page.close();
  });
});
