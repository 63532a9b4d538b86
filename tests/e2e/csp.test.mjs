// The Content-Security-Policy recipes of docs/embedding.md ("Hosting and the Content-Security-Policy"), in
// Debian's headless Chromium: each is read from the docs (its `<!-- csp:NAME -->` comment), and a host page
// on a second origin, served with exactly that header, shows its figure (an iframe, <attn-viz> elements of
// each view, the same under Trusted Types) with no securitypolicyviolation event and no console error, in
// the host and in the frame; the lab's site runs under its own recipe, the single file under its <meta>.
// A policy that lacks one of the element's directives gets one sentence naming it under the figure, in the
// element's language, never "Failed to fetch". Screenshots: build/e2e/csp-*.png.
import { describe, it, expect, beforeAll, afterAll, afterEach } from 'vitest';
import { existsSync, mkdtempSync, writeFileSync, readFileSync, rmSync, copyFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '../../scripts/serve.mjs';
import { launch, exportItem } from './browser.mjs';
import { t } from '../../web/i18n/i18n.mjs';

const ROOT = 'build/web';
const SINGLE = 'build/single/attnviz.html';
const DOC = readFileSync(new URL('../../docs/embedding.md', import.meta.url), 'utf8');

/** The recipes of docs/embedding.md: {NAME: the header's value}, as a reader copies them. */
function recipes(doc) {
  return Object.fromEntries([...doc.matchAll(/<!-- csp:([\w-]+) -->\n```\nContent-Security-Policy: (.+)\n```/g)].map((m) => [m[1], m[2]]));
}
const RECIPES = recipes(DOC);

let lab, browser, hostDir;
/** Close a server now: the browser keeps its connections alive, which server.close() would wait out. */
const shut = (srv) => { srv.server.closeAllConnections(); return srv.close(); };
const servers = [];
let labOrigin, hostPort;

/** The host pages' folder served on its own origin with `policy` (placeholders filled in). */
async function hostWith(policy) {
  const header = policy.replaceAll('https://lab.example', labOrigin).replaceAll('https://blog.example', `http://127.0.0.1:${hostPort}`);
  const srv = await serve(hostDir, hostPort, { headers: { 'Content-Security-Policy': header } });
  servers.push(srv);
  return { srv, header };
}

beforeAll(async () => {
  if (!existsSync(`${ROOT}/index.html`) || !existsSync(SINGLE)) throw new Error('run `make web` first');
  await mkdir('build/e2e', { recursive: true });
  hostDir = mkdtempSync(join(tmpdir(), 'attnviz-csp-'));
  // the host's port is known before the lab starts: the lab's frame-ancestors names the host's origin
  const probe = await serve(ROOT, 0);
  hostPort = probe.port;
  await shut(probe);
  lab = await serve(ROOT, 0, { headers: { 'Content-Security-Policy': RECIPES.lab.replaceAll('https://blog.example', `http://127.0.0.1:${hostPort}`) } });
  labOrigin = new URL(lab.url).origin;
  copyFileSync('web/favicon.svg', join(hostDir, 'favicon.svg'));
  writeFileSync(join(hostDir, 'post.css'), 'article { max-width: 700px; margin: 0 auto; } iframe { border: 0; max-width: 100%; } attn-viz { margin: 1em 0; }\n');
  const head = (title) => `<!doctype html><html lang="en"><meta charset="utf-8"><title>${title}</title><link rel="icon" href="favicon.svg"><link rel="stylesheet" href="post.css">`;
  writeFileSync(join(hostDir, 'iframe.html'), `${head('a post with a frame')}
<article><p>Some prose before the figure.</p>
<iframe src="${labOrigin}/#v=1&variant=focused&gen=clustered&p=3&n=64&embed=heatmap&controls=p" width="680" height="420" title="focused linear attention against softmax"></iframe>
</article>`);
  writeFileSync(join(hostDir, 'element.html'), `${head('a post with elements')}
<script type="module" src="${labOrigin}/embed.js"></script>
<article><p>Some prose before the figures.</p>
<attn-viz id="heat" variant="focused" gen="clustered" p="3" n="64" view="heatmap" controls="p"></attn-viz>
<attn-viz id="spec" variant="elu" d="16" n="64" view="spectrum"></attn-viz>
<attn-viz id="read" variant="performer" n="64" view="readouts"></attn-viz>
</article>`);
  writeFileSync(join(hostDir, 'one.html'), `${head('a post with one element')}
<script type="module" src="${labOrigin}/embed.js"></script>
<article><attn-viz id="en" n="32" view="readouts"></attn-viz><attn-viz id="zh" lang="zh-CN" n="32" view="readouts"></attn-viz></article>`);
  browser = await launch({ width: 900, height: 1400 });
  // in every page and frame: the violations it reports, and whether its CSP is the one served
  await browser.context.addInitScript(() => {
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (e) => window.__violations.push(`${e.effectiveDirective}: ${e.blockedURI} ${e.sample ?? ''}`.trim()), true);
  });
});

// a host server left open by a failed test would hold the host's port
afterEach(async () => { for (const s of servers.splice(0)) await shut(s); });

afterAll(async () => {
  await browser?.close();
  await lab?.close();
  if (hostDir) rmSync(hostDir, { recursive: true, force: true });
});

/** Open `path` on a host served with `policy`; collects console errors and page errors (frames' too). */
async function open(policy, path) {
  const { srv, header } = await hostWith(policy);
  const page = await browser.context.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  const res = await page.goto(`${srv.url}${path}`);
  expect(res.headers()['content-security-policy']).toBe(header);
  return { page, errors, async close() { await page.close(); servers.splice(servers.indexOf(srv), 1); await shut(srv); } };
}

/** Distinct colours of a canvas in an element's shadow root (a blank canvas has 1). */
const colours = (page, id, sel) => page.evaluate(([id, sel]) => {
  const c = document.getElementById(id).shadowRoot.querySelector(sel);
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  const set = new Set();
  for (let i = 0; i < d.length; i += 4) set.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
  return set.size;
}, [id, sel]);

/** The three elements of element.html have drawn their figures, their styles applied. */
async function elementsDrawn(page) {
  await page.waitForFunction(() => customElements.get('attn-viz'), null, { timeout: 30000 });
  for (const id of ['heat', 'spec', 'read']) await page.evaluate((id) => document.getElementById(id).snapshot(), id);
  expect(await colours(page, 'heat', '.hm-M')).toBeGreaterThan(20);
  await page.waitForFunction(() => document.getElementById('spec').shadowRoot.querySelector('.chart-spectrum canvas'));
  // the readouts' formulas: MathML typeset by KaTeX (loaded from beside embed.js)
  await page.waitForFunction(() => document.getElementById('read').shadowRoot.querySelectorAll('td.f math').length > 5, null, { timeout: 30000 });
  const seen = await page.evaluate(() => {
    const root = (id) => document.getElementById(id).shadowRoot;
    return {
      // the element's stylesheet applies under style-src 'self' (adopted, not inline): its flex box, its grid of controls
      box: getComputedStyle(root('heat').querySelector('.box')).display,
      heatmaps: getComputedStyle(root('heat').querySelector('.heatmaps')).display,
      spectra: getComputedStyle(root('spec').querySelector('.spectra')).display,
      msgs: ['heat', 'spec', 'read'].map((id) => root(id).querySelector('.msg').textContent),
    };
  });
  expect(seen).toEqual({ box: 'flex', heatmaps: 'flex', spectra: 'flex', msgs: ['', '', ''] });
}

describe('the recipes of docs/embedding.md', () => {
  it('are all there: the lab, an iframe host, an element host with and without Trusted Types, the single file', () => {
    expect(Object.keys(RECIPES).sort()).toEqual(['element-host', 'element-host-tt', 'iframe-host', 'lab', 'single']);
    // each host's own policy stays strict: no inline scripts or styles allowed
    for (const [name, p] of Object.entries(RECIPES)) expect(p, name).not.toMatch(/'unsafe-inline'|'unsafe-eval'|\s\*/);
  });

  it('an iframe: the host allows the lab in frame-src; the lab runs under its own recipe in the frame', async () => {
    const { page, errors, close } = await open(RECIPES['iframe-host'], 'iframe.html');
    const frame = await (await page.$('iframe')).contentFrame();
    await frame.waitForFunction(() => window.attnviz?.ready, null, { timeout: 30000 });
    const snap = await frame.evaluate(() => window.attnviz.snapshot());
    expect(snap.state).toMatchObject({ variant: 'focused', embed: 'heatmap', p: '3' });
    const drawn = await frame.evaluate(() => {
      const c = document.getElementById('hm-M');
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      const set = new Set();
      for (let i = 0; i < d.length; i += 4) set.add((d[i] << 16) | (d[i + 1] << 8) | d[i + 2]);
      return set.size;
    });
    expect(drawn).toBeGreaterThan(20);
    // the lab's own document was served with the lab's recipe (frame-ancestors naming this host)
    expect(await frame.evaluate(() => window.__violations)).toEqual([]);
    expect(await page.evaluate(() => window.__violations)).toEqual([]);
    expect(errors).toEqual([]);
    await page.screenshot({ path: 'build/e2e/csp-iframe.png' });
    await close();
  });

  it('an iframe: without frame-src the frame is refused, and the violation names frame-src', async () => {
    const { page, close } = await open("default-src 'self'; style-src 'self'", 'iframe.html');
    await page.waitForFunction(() => window.__violations.length > 0, null, { timeout: 10000 });
    expect(await page.evaluate(() => window.__violations)).toEqual([`frame-src: ${labOrigin}`]);
    await close();
  });

  it('the element: three views drawn, formulas typeset, its styles applied, no violation', async () => {
    const { page, errors, close } = await open(RECIPES['element-host'], 'element.html');
    await elementsDrawn(page);
    expect(await page.evaluate(() => window.__violations)).toEqual([]);
    expect(errors).toEqual([]);
    expect(page.workers().length).toBeGreaterThan(0);
    await page.screenshot({ path: 'build/e2e/csp-element.png', fullPage: true });
    await close();
  });

  it('the element under Trusted Types: the same figures, its worker started through the attnviz policy', async () => {
    expect(RECIPES['element-host-tt']).toMatch(/require-trusted-types-for 'script'; trusted-types attnviz$/);
    const { page, errors, close } = await open(RECIPES['element-host-tt'], 'element.html');
    await elementsDrawn(page);
    expect(await page.evaluate(() => window.__violations)).toEqual([]);
    expect(errors).toEqual([]);
    await close();
    // a page that requires Trusted Types without naming its policies: any name is allowed, attnviz too
    const only = RECIPES['element-host-tt'].replace(/; trusted-types attnviz$/, '');
    const again = await open(only, 'element.html');
    await elementsDrawn(again.page);
    expect(await again.page.evaluate(() => window.__violations)).toEqual([]);
    expect(again.errors).toEqual([]);
    await again.close();
  });

  it('the single file runs under the policy of its <meta>, and served with the same header', async () => {
    const html = readFileSync(SINGLE, 'utf8');
    const meta = html.match(/<meta http-equiv="Content-Security-Policy" content="([^"]+)">/)?.[1];
    expect(meta).toMatch(/^default-src 'none'; script-src 'sha256-[A-Za-z0-9+/=]+' 'wasm-unsafe-eval'; style-src 'sha256-[A-Za-z0-9+/=]+'; /);
    // before the inline script: a <meta> policy governs only what follows it
    expect(html.indexOf(meta)).toBeLessThan(html.indexOf('<script'));
    const srv = await serve('build/single', 0, { headers: { 'Content-Security-Policy': meta } });
    const page = await browser.context.newPage();
    const errors = [];
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`${srv.url}attnviz.html#preset=rank-le-d`);
    expect((await page.evaluate(() => window.attnviz.snapshot())).readouts.rank).toBeLessThanOrEqual(16);
    await page.selectOption('#k-variant', 'performer');
    await page.evaluate(() => window.attnviz.snapshot());
    await page.waitForFunction(() => document.querySelectorAll('#formula math, #readout-table math').length > 5, null, { timeout: 30000 });
    // exports: the PNG drawn from a blob: image (img-src), the SVG a blob: download
    expect((await exportItem(page, 'M.png')).bytes.subarray(1, 4).toString()).toBe('PNG');
    expect((await exportItem(page, 'M.svg')).bytes.toString()).toMatch(/^<svg /);
    expect(await page.evaluate(() => window.__violations)).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
    await shut(srv);
  });
});

describe('a policy that blocks the element', () => {
  const base = RECIPES['element-host'];
  const CASES = [
    ['connect-src without the lab', base.replace("connect-src 'self' https://lab.example", "connect-src 'self'"), 'embed.csp.connect'],
    ["script-src without 'wasm-unsafe-eval'", base.replace(" 'wasm-unsafe-eval'", ''), 'embed.csp.wasm'],
    ['no worker-src (script-src has no blob:)', base.replace(' worker-src blob:;', ''), 'embed.csp.worker'],
    ['trusted-types naming other policies', `${RECIPES['element-host-tt'].replace('trusted-types attnviz', 'trusted-types other')}`, 'embed.csp.trustedTypes'],
  ];
  for (const [what, policy, key] of CASES) {
    it(`${what}: one sentence naming the directive, in English and in Chinese`, async () => {
      expect(policy).not.toBe(base);
      const { page, close } = await open(policy, 'one.html');
      await page.waitForFunction(() => ['en', 'zh'].every((id) => /Content-Security-Policy/.test(document.getElementById(id)?.shadowRoot.querySelector('.msg').textContent)), null, { timeout: 30000 });
      const said = await page.evaluate(() => ['en', 'zh'].map((id) => document.getElementById(id).shadowRoot.querySelector('.msg').textContent));
      const params = { origin: labOrigin };
      expect(said).toEqual([t(key, params, 'en'), t(key, params, 'zh')]);
      expect(said[0]).not.toMatch(/Failed to fetch|unknown error/);
      await page.locator('#en').screenshot({ path: `build/e2e/csp-${key.split('.').pop()}.png` });
      await close();
    });
  }
});
