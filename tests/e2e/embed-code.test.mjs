// Issue 32, item 5: "copy embed code". The lab's header menu gives the iframe and the <attn-viz> snippets
// for the current view, with the controls the reader ticks; pasted into a host page on another origin,
// each shows the same snapshot as the lab; neither has an inline style= (a host's CSP with style-src 'self'
// blocks it: the host page here sends one); the copy button writes the clipboard or, refused, selects
// the text; every embed has an "open in attnviz" link (new tab, noopener) whose link is the lab's state.
// In Chinese too. Screenshots: build/e2e/embed-code-*.png.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync, mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '../../scripts/serve.mjs';
import { launch, openLab } from './browser.mjs';
import { englishIn } from './zh-check.mjs';

const ROOT = 'build/web';
// the host's policy: the lab's origin for the element's script, its wasm and the frame; no inline style
const csp = (lab) => `default-src 'self'; script-src 'self' ${lab} 'wasm-unsafe-eval'; connect-src ${lab}; worker-src blob:; frame-src ${lab}; style-src 'self'; img-src data:`;
let lab, host, hostDir, browser;

beforeAll(async () => {
  if (!existsSync(`${ROOT}/index.html`)) throw new Error('run `make web` first');
  await mkdir('build/e2e', { recursive: true });
  lab = await serve(ROOT, 0, { headers: { 'Access-Control-Allow-Origin': '*' } });
  hostDir = mkdtempSync(join(tmpdir(), 'attnviz-host-'));
  host = await serve(hostDir, 0, { headers: { 'Content-Security-Policy': csp(lab.url.replace(/\/$/, '')) } });
  browser = await launch({ width: 1366, height: 768 });
  await browser.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: lab.url.replace(/\/$/, '') });
});

afterAll(async () => {
  await browser?.close();
  await lab?.close();
  await host?.close();
  if (hostDir) rmSync(hostDir, { recursive: true, force: true });
});

/** Collect a page's errors (and CSP violations, which Chromium reports on the console). */
function watch(page) {
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  return errors;
}

/** The lab's menu opened, `ticks` ticked, `view` chosen: {iframe, element, note} as the menu shows them. */
async function snippets(page, { view = 'heatmap', ticks = [] } = {}) {
  if (!(await page.$eval('#embed-code', (d) => d.open))) await page.click('#embed-code summary');
  await page.selectOption('#embed-view', view);
  for (const k of ticks) await page.check(`#embed-ctl-${k}`);
  return page.evaluate(() => ({
    iframe: document.getElementById('embed-iframe').value,
    element: document.getElementById('embed-element').value,
    note: document.querySelector('.embed-code .export-note').textContent,
  }));
}

/** A host page holding `html`, opened; returns {page, errors}. */
async function hostPage(name, html, lang = 'en') {
  writeFileSync(join(hostDir, name), `<!doctype html><html lang="${lang}"><meta charset="utf-8"><title>a post</title><link rel="icon" href="data:,">
<p>Some prose before the figure.</p>
${html}
</html>`);
  const page = await browser.context.newPage();
  const errors = watch(page);
  await page.goto(`${host.url}${name}`);
  return { page, errors };
}

/** The state without the keys that say how it is shown (an embed's view and controls). */
const figureOf = (state) => { const s = { ...state }; delete s.embed; delete s.controls; return s; };

/** Open `href` as the "open in attnviz" link would, and return the lab's snapshot there. */
async function opened(href) {
  const { page, errors } = await openLab(browser.context, href);
  const s = await page.evaluate(() => window.attnviz.snapshot());
  expect(errors).toEqual([]);
  await page.close();
  return s;
}

describe('copy embed code', () => {
  it('gives an iframe and an element snippet that show the lab\'s snapshot on another origin, without inline styles', async () => {
    const hash = 'v=1&variant=focused&n=128&p=4&gen=clustered&seed=3&tau=0.2';
    const { page, errors } = await openLab(browser.context, lab.url, { hash });
    const want = await page.evaluate(() => window.attnviz.snapshot());
    const code = await snippets(page, { ticks: ['p', 'variant'] });
    await page.screenshot({ path: 'build/e2e/embed-code-menu.png' });
    expect(code.iframe).toMatch(/^<iframe src="[^"]+" width="700" height="420" title="attnviz: focused \(FLatten\) against softmax"><\/iframe>$/);
    expect(code.element).toMatch(/^<script type="module" src="[^"]+embed\.js"><\/script>\n<attn-viz [^>]*view="heatmap"[^>]*><\/attn-viz>$/);
    for (const c of [code.iframe, code.element]) expect(c).not.toMatch(/style=/);
    expect(code.iframe).toMatch(/controls=variant,p/);
    expect(code.element).toMatch(/ controls="variant,p"/);
    expect(code.element).not.toMatch(/ tau="0.1"| std=| cmap=/); // defaults are left out

    // the element pasted into a post
    const el = await hostPage('element.html', code.element);
    await el.page.waitForFunction(() => customElements.get('attn-viz'));
    const got = await el.page.evaluate(() => document.querySelector('attn-viz').snapshot());
    expect(figureOf(got.state)).toEqual(figureOf(want.state));
    expect(got.state).toMatchObject({ embed: 'heatmap', controls: 'variant,p' });
    expect(got.readouts).toEqual(want.readouts);
    const shown = await el.page.evaluate(() => [...document.querySelector('attn-viz').shadowRoot.querySelectorAll('.ctl')].filter((r) => r.getClientRects().length).map((r) => r.dataset.knob));
    expect(shown.sort()).toEqual(['p', 'variant']);
    // its "open in attnviz" link: a new tab, no opener, the lab at the same state
    const link = await el.page.evaluate(() => { const a = document.querySelector('attn-viz').shadowRoot.querySelector('a.open'); return { href: a.href, target: a.target, rel: a.rel, text: a.textContent, shown: a.getClientRects().length > 0 }; });
    expect(link).toMatchObject({ target: '_blank', rel: 'noopener', text: 'open in attnviz ↗', shown: true });
    expect(link.href.startsWith(lab.url)).toBe(true);
    const full = await opened(link.href);
    expect(full.state).toEqual(want.state);
    expect(full.readouts).toEqual(want.readouts);
    await el.page.locator('attn-viz').screenshot({ path: 'build/e2e/embed-code-element.png' });
    expect(el.errors).toEqual([]);
    await el.page.close();

    // the iframe pasted into a post
    const fr = await hostPage('iframe.html', code.iframe);
    const frame = await (await fr.page.waitForSelector('iframe')).contentFrame();
    await frame.waitForFunction(() => window.attnviz?.ready, null, { timeout: 30000 });
    const inFrame = await frame.evaluate(() => window.attnviz.snapshot());
    expect(figureOf(inFrame.state)).toEqual(figureOf(want.state));
    expect(inFrame.readouts).toEqual(want.readouts);
    const frameBox = await fr.page.$eval('iframe', (f) => ({ w: f.width, h: f.height, style: f.getAttribute('style') }));
    expect(frameBox).toEqual({ w: '700', h: '420', style: null });
    const open = await frame.$eval('#open-lab', (a) => ({ href: a.href, target: a.target, rel: a.rel, shown: a.getClientRects().length > 0, text: a.textContent }));
    expect(open).toMatchObject({ target: '_blank', rel: 'noopener', shown: true, text: 'open in attnviz ↗' });
    expect((await opened(open.href)).state).toEqual(want.state);
    await fr.page.screenshot({ path: 'build/e2e/embed-code-iframe.png' });
    expect(fr.errors).toEqual([]);
    await fr.page.close();
    // the full lab has no such link
    expect(await page.$eval('#open-lab', (a) => a.getClientRects().length)).toBe(0);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('copies to the clipboard, or selects the text when the clipboard is refused', async () => {
    const { page, errors } = await openLab(browser.context, lab.url, { hash: 'v=1&variant=elu&n=64' });
    const code = await snippets(page, { view: 'spectrum' });
    await page.click('button[data-copy="element"]');
    await expect.poll(() => page.$eval('.embed-code .export-note', (e) => e.textContent)).toBe('copied');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(code.element);
    // refused: the text is selected for the reader's own copy, and the note says how
    await page.evaluate(() => { navigator.clipboard.writeText = () => Promise.reject(new Error('denied')); });
    await page.click('button[data-copy="iframe"]');
    await expect.poll(() => page.$eval('.embed-code .export-note', (e) => e.textContent)).toBe('selected: press Ctrl+C (⌘C on a Mac) to copy');
    expect(await page.evaluate(() => {
      const a = document.activeElement;
      return a.id === 'embed-iframe' && a.selectionStart === 0 && a.selectionEnd === a.value.length;
    })).toBe(true);
    // the sweep is the iframe's only: the element's box is empty and says so
    const sweep = await snippets(page, { view: 'sweep' });
    expect(sweep.iframe).toMatch(/embed=sweep/);
    expect(sweep.element).toBe('');
    expect(sweep.note).toBe('the <attn-viz> element has no sweep: use the iframe');
    expect(await page.$eval('button[data-copy="element"]', (b) => b.disabled)).toBe(true);
    // the menu follows the state while open
    await page.evaluate(() => { location.hash = 'v=1&variant=elu&n=32'; });
    await expect.poll(() => page.$eval('#embed-iframe', (e) => e.value)).toMatch(/n=32/);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('in Chinese: the menu\'s words, lang in both snippets, and the element\'s open link in Chinese', async () => {
    const hash = 'v=1&variant=focused&n=64&p=5&lang=zh';
    const { page, errors } = await openLab(browser.context, lab.url, { hash });
    const want = await page.evaluate(() => window.attnviz.snapshot());
    const code = await snippets(page, { ticks: ['p'] });
    const words = await page.evaluate(() => ({
      summary: document.querySelector('#embed-code summary').textContent,
      legend: document.querySelector('.embed-controls legend').textContent,
      copy: document.querySelector('button[data-copy="iframe"]').textContent,
    }));
    expect(words).toEqual({ summary: '嵌入', legend: '读者可调节的控件', copy: '复制' });
    // no English left in the menu (the snippets themselves are code), its titles and labels included
    const menuText = await page.evaluate(() => {
      const m = document.getElementById('embed-code');
      const texts = [m.title, ...[...m.querySelectorAll('label, legend, option, summary, button')].map((e) => e.textContent),
        ...[...m.querySelectorAll('[aria-label]')].map((e) => e.getAttribute('aria-label'))];
      return texts;
    });
    expect(menuText.flatMap((x) => englishIn(x))).toEqual([]);
    expect((await snippets(page, { view: 'sweep' })).note).toBe('自定义元素（attn-viz）没有扫描图：请用内联框架');
    await page.selectOption('#embed-view', 'heatmap');
    await page.screenshot({ path: 'build/e2e/embed-code-menu-zh.png' });
    expect(code.iframe).toMatch(/[#&]lang=zh[&"]/);
    expect(code.iframe).toMatch(/title="attnviz：FLatten（聚焦线性注意力）与 softmax 对比"/);
    expect(code.element).toMatch(/ lang="zh-CN"/);
    const el = await hostPage('element-zh.html', code.element, 'en');
    await el.page.waitForFunction(() => customElements.get('attn-viz'));
    const got = await el.page.evaluate(() => document.querySelector('attn-viz').snapshot());
    expect(figureOf(got.state)).toEqual(figureOf(want.state));
    const link = await el.page.evaluate(() => { const a = document.querySelector('attn-viz').shadowRoot.querySelector('a.open'); return { href: a.href, text: a.textContent, title: a.title }; });
    expect(link.text).toBe('在 attnviz 中打开 ↗');
    expect(link.title).toBe('在新标签页中打开完整的实验室，状态相同');
    expect(link.href).toMatch(/[#&]lang=zh(&|$)/);
    const { page: full } = await openLab(browser.context, link.href);
    expect(await full.evaluate(() => document.documentElement.lang)).toBe('zh-CN');
    expect((await full.evaluate(() => window.attnviz.snapshot())).state).toEqual(want.state);
    await full.close();
    expect(el.errors).toEqual([]);
    await el.page.close();
    // the iframe embed's link in Chinese
    const { page: emb } = await openLab(browser.context, lab.url, { hash: `${hash}&embed=heatmap&controls=p` });
    expect(await emb.$eval('#open-lab', (a) => a.textContent)).toBe('在 attnviz 中打开 ↗');
    expect(await emb.$eval('#open-lab', (a) => a.href)).toMatch(/[#&]lang=zh(&|$)/);
    await emb.close();
    expect(errors).toEqual([]);
    await page.close();
  });
});
