// Embedding (issue 10, docs/embedding.md) in Debian's headless Chromium: a host page on another origin
// (a second server) places the lab in a 720×420 iframe with `embed=VIEW`; the frame shows one figure and
// the controls its link names, answers attnviz:get with the snapshot, obeys attnviz:set, sends a snapshot
// after each settled change to a subscriber, ignores hostile and malformed messages, and with host= obeys
// only the origins it names (an invalid host= obeys no one; a message never sets it). Lesson links can hide controls and lock the view.
// An <attn-viz> element speaks its lang (or an ancestor's) beside one in English on the same page. Screenshots:
// build/e2e/embed-*.png.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync, mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '../../scripts/serve.mjs';
import { launch, openLab } from './browser.mjs';
import { CATALOGUES } from '../../web/i18n/i18n.mjs';

const ROOT = 'build/web';
const ZH_UNKNOWN = CATALOGUES.zh['notice.x.link.unknown'];
let lab, host, hostDir, browser;

beforeAll(async () => {
  if (!existsSync(`${ROOT}/index.html`)) throw new Error('run `make web` first');
  await mkdir('build/e2e', { recursive: true });
  lab = await serve(ROOT, 0);
  hostDir = mkdtempSync(join(tmpdir(), 'attnviz-host-'));
  // the host page: a blog post with one embedded figure, and a log of what the frame sends
  writeFileSync(join(hostDir, 'index.html'), `<!doctype html><meta charset="utf-8"><title>a post</title><link rel="icon" href="data:,">
<p>Some prose before the figure.</p>
<iframe id="fig" width="720" height="420" style="border:1px solid #ccc"></iframe>
<script>
  window.got = [];
  addEventListener('message', (e) => { if (e.data && e.data.type && e.data.type.startsWith('attnviz:')) got.push({ origin: e.origin, data: e.data }); });
  window.ask = (msg) => document.getElementById('fig').contentWindow.postMessage(msg, '*');
</script>`);
  host = await serve(hostDir, 0);
  browser = await launch({ width: 900, height: 600 });
});

afterAll(async () => {
  await browser?.close();
  await lab?.close();
  await host?.close();
  if (hostDir) rmSync(hostDir, { recursive: true, force: true });
});

/** Open the host page with the lab at `hash` in its frame; wait until the frame has settled. */
async function hostWith(hash) {
  const page = await browser.context.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(host.url);
  await page.$eval('#fig', (f, src) => { f.src = src; }, `${lab.url}#${hash}`);
  const frame = await (await page.$('#fig')).contentFrame();
  await frame.waitForFunction(() => window.attnviz?.ready, null, { timeout: 30000 });
  await frame.evaluate(() => window.attnviz.snapshot());
  return { page, frame, errors };
}

/** The host's next message of `type` after index `from` (polls the log). */
async function nextMessage(page, type, from) {
  await page.waitForFunction(([t, i]) => window.got.slice(i).some((m) => m.data.type === t), [type, from], { timeout: 30000 });
  return page.evaluate(([t, i]) => window.got.slice(i).find((m) => m.data.type === t), [type, from]);
}

describe('an embedded figure in a host page on another origin', () => {
  it('shows one figure and the controls its link names, without the page around it', async () => {
    const { page, frame, errors } = await hostWith('v=1&variant=focused&n=128&embed=heatmap&controls=p');
    const seen = await frame.evaluate(() => {
      const vis = (sel) => { const e = document.querySelector(sel); return !!e && e.getClientRects().length > 0 && getComputedStyle(e).display !== 'none'; };
      const rows = [...document.querySelectorAll('.controls .ctl')].filter((r) => !r.hidden).map((r) => r.dataset.knob);
      const hm = document.getElementById('hm-M').getBoundingClientRect();
      return { header: vis('.top'), lesson: vis('#lesson'), heat: vis('.heatmaps'), spec: vis('.spectra'), read: vis('.readouts'), rows, hm: { w: hm.width, bottom: hm.bottom }, vw: innerWidth, vh: innerHeight, scrollW: document.documentElement.scrollWidth };
    });
    expect(seen).toMatchObject({ header: false, lesson: false, heat: true, spec: false, read: false, rows: ['p'] });
    expect(seen.hm.w).toBeGreaterThan(100);               // the heatmaps take the frame's width…
    expect(seen.hm.bottom).toBeLessThanOrEqual(seen.vh);  // …and fit its height
    expect(seen.scrollW).toBeLessThanOrEqual(seen.vw);
    await page.screenshot({ path: 'build/e2e/embed-heatmap-720x420.png' });
    // the spectrum as the figure, no controls
    await frame.evaluate(() => { location.hash = 'v=1&variant=elu&d=16&n=128&embed=spectrum'; });
    await frame.evaluate(() => window.attnviz.snapshot());
    expect(await frame.$eval('.controls', (e) => getComputedStyle(e).display)).toBe('none');
    const chart = await frame.$eval('#chart-spectrum', (e) => e.getBoundingClientRect().width);
    expect(chart).toBeGreaterThan(500);
    await page.screenshot({ path: 'build/e2e/embed-spectrum-720x420.png' });
    expect(errors, errors.join('\n')).toEqual([]);
    await page.close();
  });

  // Issue 31: lang=zh in an embed's link: its controls in Chinese, its <html lang> zh-CN, the snapshot the
  // host gets the same as in English, and the frame 720 px wide cuts no control label
  it('with lang=zh shows its controls in Chinese and sends the host the same snapshot', async () => {
    const hash = 'v=1&variant=focused&n=64&p=3&embed=heatmap&controls=p,variant';
    const { page, frame, errors } = await hostWith(`${hash}&lang=zh`);
    const seen = await frame.evaluate(() => ({
      lang: document.documentElement.lang,
      labels: [...document.querySelectorAll('.controls .ctl')].filter((r) => r.getClientRects().length).map((r) => r.querySelector('label').textContent),
      cut: [...document.querySelectorAll('.controls .ctl label')].filter((l) => l.getClientRects().length && l.scrollWidth > l.clientWidth + 1).map((l) => l.textContent),
    }));
    expect(seen.lang).toBe('zh-CN');
    expect(seen.labels).toEqual(['变体', '聚焦幂次 p']);
    expect(seen.cut).toEqual([]);
    await page.evaluate(() => window.ask({ type: 'attnviz:get' }));
    const zh = await nextMessage(page, 'attnviz:snapshot', 0);
    await page.screenshot({ path: 'build/e2e/embed-heatmap-zh.png' });
    await page.close();
    const en = await hostWith(hash);
    await en.page.evaluate(() => window.ask({ type: 'attnviz:get' }));
    expect((await nextMessage(en.page, 'attnviz:snapshot', 0)).data).toEqual(zh.data);
    expect([...errors, ...en.errors]).toEqual([]);
    await en.page.close();
  });

  it('answers attnviz:get, obeys attnviz:set and tells a subscriber after each settled change', async () => {
    const { page, frame, errors } = await hostWith('v=1&variant=performer&m=64&n=64&d=16&embed=readouts');
    await page.evaluate(() => window.ask({ type: 'attnviz:get' }));
    const first = await nextMessage(page, 'attnviz:snapshot', 0);
    expect(first.origin).toBe(lab.url.replace(/\/$/, ''));
    expect(first.data.state).toEqual((await frame.evaluate(() => window.attnviz.snapshot())).state);
    expect(first.data.state).toMatchObject({ src: 'synthetic', layer: '0', head: '0' }); // every key, as snapshot()
    expect(first.data.readouts.variant).toBe('performer');
    let from = await page.evaluate(() => window.got.length);
    await page.evaluate(() => window.ask({ type: 'attnviz:subscribe' }));
    await nextMessage(page, 'attnviz:snapshot', from);
    from = await page.evaluate(() => window.got.length);
    await page.evaluate(() => window.ask({ type: 'attnviz:set', state: { m: 1024, rseed: 3 } }));
    const after = await nextMessage(page, 'attnviz:snapshot', from);
    expect(after.data.state.m).toBe('1024');
    expect(after.data.state.rseed).toBe('3');
    expect(after.data.state.n).toBe('64'); // merged, not replaced
    expect(after.data.readouts.error_fro_rel).not.toBe(first.data.readouts.error_fro_rel);
    // a bad value: clamped, reported back, the page intact
    from = await page.evaluate(() => window.got.length);
    await page.evaluate(() => window.ask({ type: 'attnviz:set', state: { n: 99999 } }));
    expect((await nextMessage(page, 'attnviz:error', from)).data.message).toMatch(/n: 99999 is outside/);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('ignores hostile and malformed messages, and with host= obeys only the origins it names', async () => {
    const { page, frame, errors } = await hostWith('v=1&variant=elu&n=64&embed=heatmap');
    const before = await frame.evaluate(() => window.attnviz.snapshot());
    await page.evaluate(() => {
      for (const m of [null, 42, 'attnviz:get', [], { type: 'attnviz:nope' }, { type: 'attnviz:set' }, { type: 'attnviz:set', state: null },
        { type: 'attnviz:set', state: [1, 2] }, { type: 'attnviz:set', state: { n: { toString: 1 } } }, { type: 'attnviz:set', state: { __proto__: { n: 32 } } },
        { type: 'attnviz:set', state: { variant: '<img src=x onerror=alert(1)>' } }, { type: { toString: null } }]) window.ask(m);
    });
    const after = await frame.evaluate(() => window.attnviz.snapshot());
    expect(after.state).toEqual(before.state);
    expect(await frame.$$eval('img', (x) => x.length)).toBe(0);
    expect(await frame.evaluate(() => document.getElementById('notice').textContent)).toMatch(/variant: "<img src=x onerror=alert\(1\)>" is not one of/);
    expect(errors).toEqual([]);
    await page.close();
    // restricted to another origin: the parent is not obeyed
    const r = await hostWith('v=1&variant=elu&n=64&embed=heatmap&host=https://blog.example');
    await r.page.evaluate(() => window.ask({ type: 'attnviz:set', state: { n: 32 } }));
    await r.page.evaluate(() => window.ask({ type: 'attnviz:get' }));
    await r.page.waitForTimeout(500);
    expect(await r.page.evaluate(() => window.got.length)).toBe(0);
    expect((await r.frame.evaluate(() => window.attnviz.snapshot())).state.n).toBe('64');
    // … and naming the host's origin lets it in
    await r.frame.evaluate((o) => { location.hash = `v=1&variant=elu&n=64&embed=heatmap&host=${o}`; }, host.url.replace(/\/$/, ''));
    await r.frame.evaluate(() => window.attnviz.snapshot());
    await r.page.evaluate(() => window.ask({ type: 'attnviz:get' }));
    expect((await nextMessage(r.page, 'attnviz:snapshot', 0)).data.state.host).toBe(host.url.replace(/\/$/, ''));
    await r.page.close();
  });
});

/**
 * Every message the host sent so far has reached the frame and been answered, if it was obeyed: the
 * frame counts what it receives, settles (a get's reply is posted on the way), then posts a marker,
 * which reaches the host after any reply. Returns the host's log up to the marker.
 */
async function drained(page, frame, sent) {
  await frame.waitForFunction((k) => window.__received >= k, sent, { timeout: 30000 });
  await frame.evaluate(() => window.attnviz.snapshot());
  await frame.evaluate(() => parent.postMessage({ type: 'attnviz:test-marker' }, '*'));
  await page.waitForFunction(() => window.got.some((m) => m.data.type === 'attnviz:test-marker'), null, { timeout: 30000 });
  return page.evaluate(() => window.got.filter((m) => m.data.type !== 'attnviz:test-marker'));
}
const countReceived = (frame) => frame.evaluate(() => {
  window.__received = 0;
  addEventListener('message', (e) => { if (typeof e.data?.type === 'string' && e.data.type.startsWith('attnviz:')) window.__received += 1; });
});

describe('host= fails closed, and only the link sets it (issue 27, item 7)', () => {
  it('an invalid host= obeys no one, the parent included, and the notice says so', async () => {
    for (const bad of ['*', 'null', 'https://blog.example/path']) {
      const r = await hostWith(`v=1&variant=elu&n=64&embed=heatmap&host=${encodeURIComponent(bad)}`);
      await countReceived(r.frame);
      await r.page.evaluate(() => { window.ask({ type: 'attnviz:set', state: { n: 32 } }); window.ask({ type: 'attnviz:get' }); });
      expect(await drained(r.page, r.frame, 2), bad).toEqual([]);
      expect((await r.frame.evaluate(() => window.attnviz.snapshot())).state.n).toBe('64');
      expect(await r.frame.$eval('#notice', (e) => e.textContent), bad).toMatch(/^host: ".*" is not an origin \(http\(s\):\/\/host\[:port\]\): no message is obeyed$/);
      expect(r.errors).toEqual([]);
      await r.page.close();
    }
  });

  it('a host= that names no origin, or a repeated host key, obeys no one, the parent included, and says so', async () => {
    const origin = host.url.replace(/\/$/, ''); // the parent's own origin: obeyed, were the last key to win
    for (const link of ['host=%2C', 'host=%20%2C', `host=${origin}&host=`, `host=*&host=${origin}`]) {
      const r = await hostWith(`v=1&variant=elu&n=64&embed=heatmap&${link}`);
      await countReceived(r.frame);
      await r.page.evaluate(() => { window.ask({ type: 'attnviz:set', state: { n: 32 } }); window.ask({ type: 'attnviz:get' }); });
      expect(await drained(r.page, r.frame, 2), link).toEqual([]);
      expect((await r.frame.evaluate(() => window.attnviz.snapshot())).state.n, link).toBe('64');
      expect(await r.frame.$eval('#notice', (e) => e.textContent), link).toMatch(/^host: (names no origin|given 2 times in the link), so no message is obeyed \(.*\)$/);
      expect(r.errors).toEqual([]);
      await r.page.close();
    }
  });

  it('host= names an origin as the browser serializes it (any case, a default port, a trailing slash)', async () => {
    const origin = host.url.replace(/\/$/, ''); // http://127.0.0.1:PORT
    const r = await hostWith(`v=1&variant=elu&n=64&embed=heatmap&host=${origin.toUpperCase()}/`);
    await countReceived(r.frame);
    await r.page.evaluate(() => window.ask({ type: 'attnviz:get' }));
    const got = await drained(r.page, r.frame, 1);
    expect(got.map((m) => m.data.type)).toEqual(['attnviz:snapshot']);
    expect(got[0].data.state.host).toBe(origin);
    expect(await r.frame.$eval('#notice', (e) => e.hidden || e.textContent === '')).toBe(true);
    await r.page.close();
  });

  it('attnviz:set never sets host=: it is refused, said back, and the parent is still obeyed', async () => {
    const { page, frame, errors } = await hostWith('v=1&variant=elu&n=64&embed=heatmap');
    await countReceived(frame);
    await page.evaluate(() => window.ask({ type: 'attnviz:set', state: { host: 'https://evil.example', n: 128 } }));
    await page.evaluate(() => window.ask({ type: 'attnviz:get' }));
    const got = await drained(page, frame, 2);
    expect(got.map((m) => m.data.type)).toEqual(['attnviz:error', 'attnviz:snapshot']);
    expect(got[0].data.message).toMatch(/^host: set only by the embed's link, never by a message$/);
    expect(got[1].data.state.host).toBe(''); // the default: the parent
    expect(got[1].data.state.n).toBe('128'); // the rest of the message is taken
    expect(errors).toEqual([]);
    await page.close();
  });
});

describe('lesson links that hide controls and lock the view', () => {
  it('hide= hides the controls it names; lock=1 disables every control', async () => {
    const { page, errors } = await openLab(browser.context, lab.url, { hash: 'preset=focused-p&hide=gen,seed,std,dwc&lock=1' });
    const rows = await page.$$eval('.controls .ctl', (r) => r.filter((x) => !x.hidden).map((x) => x.dataset.knob));
    expect(rows).not.toContain('gen');
    expect(rows).not.toContain('dwc');
    expect(rows).not.toContain('dwc_k');
    expect(rows).toContain('p');
    expect(await page.$eval('#k-p', (e) => e.disabled)).toBe(true);
    expect(await page.$eval('#k-variant', (e) => e.disabled)).toBe(true);
    const s = await page.evaluate(() => window.attnviz.snapshot());
    expect(s.state.hide).toBe('gen,seed,std,dwc');
    expect(page.url()).toMatch(/hide=gen,seed,std,dwc/);
    // a bad name is reported and dropped
    await page.evaluate(() => { location.hash = 'preset=focused-p&hide=gen,bogus,theme'; });
    const t = await page.evaluate(() => window.attnviz.snapshot());
    expect(t.state.hide).toBe('gen');
    expect(await page.$eval('#notice', (e) => e.textContent)).toMatch(/hide: "bogus", "theme" are not a control, ignored/);
    expect(errors).toEqual([]);
    await page.close();
  });
});

describe('the <attn-viz> element on a host page of another origin', () => {
  it('renders two figures from one module script, a worker each, follows its attributes, waits off screen', async () => {
    const cors = await serve(ROOT, 0, { headers: { 'Access-Control-Allow-Origin': '*' } });
    writeFileSync(join(hostDir, 'element.html'), `<!doctype html><meta charset="utf-8"><title>a post</title><link rel="icon" href="data:,">
<script type="module" src="${cors.url}embed.js"></script>
<p>The rank of linear attention:</p>
<attn-viz id="a" variant="elu" n="128" d="16" view="spectrum" style="width: 640px"></attn-viz>
<p>And a heatmap with its knob:</p>
<attn-viz id="b" variant="focused" n="64" p="2" view="heatmap" controls="p" style="width: 640px"></attn-viz>
<div style="height: 3000px"></div>
<attn-viz id="far" variant="softmax" n="64" view="readouts"></attn-viz>`);
    const page = await browser.context.newPage();
    const errors = [];
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`${host.url}element.html`);
    await page.waitForFunction(() => customElements.get('attn-viz'));
    const a = await page.evaluate(() => document.getElementById('a').snapshot());
    expect(a.readouts.variant).toBe('elu');
    expect(a.readouts.rank).toBeLessThanOrEqual(16);
    expect(a.state.embed).toBe('spectrum');
    expect(a.state).toMatchObject({ src: 'synthetic', layer: '0', head: '0' }); // every key, as the page's snapshot()
    const b = await page.evaluate(() => document.getElementById('b').snapshot());
    expect(b.state.p).toBe('2');
    // the same state in the full page gives the same readouts
    const { page: full } = await openLab(browser.context, lab.url, { hash: 'v=1&variant=focused&n=64&p=2' });
    const fb = await full.evaluate(() => window.attnviz.snapshot());
    for (const k of ['rank', 'error_fro_rel', 'row_entropy_mean', 'sparsity_tau']) expect(b.readouts[k], k).toBe(fb.readouts[k]);
    await full.close();
    // drawn: the heatmap canvas holds many colours; the spectrum chart has its canvas
    const colours = await page.evaluate(() => {
      const c = document.getElementById('b').shadowRoot.querySelector('.hm-M');
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      const set = new Set(); for (let i = 0; i < d.length; i += 4) set.add(`${d[i]},${d[i + 1]},${d[i + 2]}`); return set.size;
    });
    expect(colours).toBeGreaterThan(20);
    expect(await page.evaluate(() => !!document.getElementById('a').shadowRoot.querySelector('.chart-spectrum canvas'))).toBe(true);
    // a worker per element that has computed (issue 32: one element's job never waits for another's)
    expect(page.workers().length).toBe(2);
    // an attribute change updates the figure; a control writes its attribute
    await page.evaluate(() => document.getElementById('b').setAttribute('p', '6'));
    const b6 = await page.evaluate(() => document.getElementById('b').snapshot());
    expect(b6.state.p).toBe('6');
    expect(b6.readouts.row_entropy_mean).toBeLessThan(b.readouts.row_entropy_mean);
    await page.evaluate(() => { const i = document.getElementById('b').shadowRoot.getElementById('k-p'); i.value = '4'; i.dispatchEvent(new Event('change')); });
    expect(await page.evaluate(() => document.getElementById('b').getAttribute('p'))).toBe('4');
    // the element far below has computed nothing until it is scrolled into view
    expect(await page.evaluate(() => document.getElementById('far').view.job)).toBe(0);
    await page.evaluate(() => document.getElementById('far').scrollIntoView());
    await page.waitForFunction(() => document.getElementById('far').view.job > 0);
    expect((await page.evaluate(() => document.getElementById('far').snapshot())).readouts.variant).toBe('softmax');
    expect(page.workers().length).toBe(3);
    // a removed element ends its worker
    await page.evaluate(() => document.getElementById('far').remove());
    await expect.poll(() => page.workers().length).toBe(2);
    await page.evaluate(() => scrollTo(0, 0));
    await page.screenshot({ path: 'build/e2e/embed-element.png' });
    await page.locator('#b').screenshot({ path: 'build/e2e/embed-element-heatmap.png' });
    expect(errors).toEqual([]);
    await page.close();
    await cors.close();
  });
  it('a failure in an element\'s worker settles its snapshot() and is said under its figure', async () => {
    const cors = await serve(ROOT, 0, { headers: { 'Access-Control-Allow-Origin': '*' } });
    writeFileSync(join(hostDir, 'element-fail.html'), `<!doctype html><meta charset="utf-8"><title>a post</title><link rel="icon" href="data:,">
<script type="module" src="${cors.url}embed.js"></script>
<attn-viz id="b" variant="focused" n="64" p="2" view="readouts" style="width: 640px"></attn-viz>
<attn-viz id="h" variant="elu" n="32" view="readouts" host="https://blog.example"></attn-viz>`);
    const page = await browser.context.newPage();
    await page.goto(`${host.url}element-fail.html`);
    await page.waitForFunction(() => customElements.get('attn-viz'));
    // an element takes no messages: a host attribute restricts nothing, and the element says so
    await page.evaluate(() => document.getElementById('h').snapshot());
    expect(await page.evaluate(() => document.getElementById('h').shadowRoot.querySelector('.msg').textContent))
      .toBe('host: the <attn-viz> element answers no messages (host= is for the iframe embed)');
    expect((await page.evaluate(() => document.getElementById('b').snapshot())).readouts.error_fro_rel).not.toBeNull();
    // the workers throw on the next request, outside any job's own error answer
    for (const worker of page.workers()) {
      await worker.evaluate(() => {
        const handle = self.onmessage;
        self.onmessage = (e) => { if (e.data?.kind === 'job') throw new Error('injected failure'); return handle(e); };
      });
    }
    await page.evaluate(() => document.getElementById('b').setAttribute('p', '5'));
    const s = await page.evaluate(() => document.getElementById('b').snapshot());
    expect(s.state.p).toBe('5');
    expect(s.readouts.error_fro_rel).toBeNull();
    expect(s.readouts.error_fro_rel_reason).toBe('not computed (the worker failed: injected failure)');
    expect(await page.evaluate(() => document.getElementById('b').shadowRoot.querySelector('.msg').textContent)).toBe('the worker failed: injected failure');
    await page.close();
    await cors.close();
  });
  // Issue 31: an element speaks its own language (its lang attribute, or an ancestor's as HTML inherits
  // it), beside one in English on the same page; the language changes words only, never the snapshot.
  it('lang="zh-CN" shows its controls, captions and messages in Chinese beside an English one; the snapshot is the same', async () => {
    const cors = await serve(ROOT, 0, { headers: { 'Access-Control-Allow-Origin': '*' } });
    writeFileSync(join(hostDir, 'element-lang.html'), `<!doctype html><html lang="en"><meta charset="utf-8"><title>a post</title><link rel="icon" href="data:,">
<script type="module" src="${cors.url}embed.js"></script>
<attn-viz id="zh" lang="zh-CN" variant="focused" n="64" p="3" view="heatmap" controls="p,variant" style="width: 640px"></attn-viz>
<attn-viz id="en" variant="focused" n="64" p="3" view="heatmap" controls="p,variant" style="width: 640px"></attn-viz>
<div lang="zh"><attn-viz id="inherit" variant="elu" n="32" view="readouts" style="width: 640px"></attn-viz></div>
<attn-viz id="bad" lang="zh" variant="elu" n="32" colour="red" style="width: 640px"></attn-viz></html>`);
    const page = await browser.context.newPage();
    const errors = [];
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(`${host.url}element-lang.html`);
    await page.waitForFunction(() => customElements.get('attn-viz'));
    const snaps = await page.evaluate(() => Promise.all(['zh', 'en', 'inherit'].map((id) => document.getElementById(id).snapshot())));
    const words = (id) => page.evaluate((id) => {
      const r = document.getElementById(id).shadowRoot;
      const shown = (el) => el.getClientRects().length > 0;
      return {
        labels: [...r.querySelectorAll('.ctl label')].filter(shown).map((l) => l.textContent.trim()),
        option: r.getElementById('k-variant')?.selectedOptions[0]?.textContent ?? null,
        captions: [...r.querySelectorAll('figcaption')].map((c) => c.textContent),
        aria: [...r.querySelectorAll('[aria-label]')].map((e) => e.getAttribute('aria-label')),
        readouts: [...r.querySelectorAll('td.l > span:first-child')].map((s) => s.textContent.trim()),
        msg: r.querySelector('.msg').textContent,
        job: document.getElementById(id).view.job,
      };
    }, id);
    const CJK = /[\u3400-\u9fff]/;
    const zh = await words('zh'), en = await words('en'), inherit = await words('inherit');
    expect(zh.labels.length).toBe(2);
    expect(zh.labels.filter((l) => !CJK.test(l))).toEqual([]);
    expect(zh.option).toBe('FLatten（聚焦线性注意力）');
    expect(zh.captions).toEqual(['FLatten（聚焦线性注意力）：M', 'softmax 注意力 A', '差值 M − A']);
    expect(zh.aria.filter((a) => !CJK.test(a))).toEqual([]);
    expect(zh.msg).toBe(''); // lang="zh-CN" is the element's, not an unknown key of the link
    expect(en.labels.filter((l) => CJK.test(l))).toEqual([]);
    expect(en.captions).toEqual(['focused (FLatten): M', 'softmax A', 'M − A']);
    expect(inherit.readouts.length).toBeGreaterThan(3);
    expect(inherit.readouts.filter((l) => !CJK.test(l) && !/^KL/.test(l))).toEqual([]);
    // a problem with its attributes is said in its language too
    await page.evaluate(() => document.getElementById('bad').snapshot());
    expect((await words('bad')).msg).toBe(ZH_UNKNOWN.replace('{key}', 'colour'));
    // the same state in both languages: the same snapshot, lang not in it
    expect(snaps[0]).toEqual(snaps[1]);
    expect(Object.keys(snaps[0].state)).not.toContain('lang');
    // the host's own t() language is untouched by the elements' (they set it only while they write)
    expect(await page.evaluate(() => document.documentElement.lang)).toBe('en');
    // a change of lang changes the words only: nothing is computed again
    await page.evaluate(() => document.getElementById('zh').setAttribute('lang', 'en'));
    await page.waitForFunction(() => document.getElementById('zh').shadowRoot.querySelector('figcaption').textContent === 'focused (FLatten): M');
    const back = await words('zh');
    expect(back.labels).toEqual(en.labels);
    expect(back.job).toBe(zh.job);
    await page.evaluate(() => document.getElementById('zh').setAttribute('lang', 'zh'));
    await page.waitForFunction(() => document.getElementById('zh').shadowRoot.querySelector('figcaption').textContent === 'FLatten（聚焦线性注意力）：M');
    await page.locator('#zh').screenshot({ path: 'build/e2e/embed-element-zh.png' });
    expect(errors).toEqual([]);
    // a failure is said in the element's language; the snapshot's reason stays English
    for (const worker of page.workers()) {
      await worker.evaluate(() => {
        const handle = self.onmessage;
        self.onmessage = (e) => { if (e.data?.kind === 'job') throw new Error('injected failure'); return handle(e); };
      });
    }
    await page.evaluate(() => document.getElementById('zh').setAttribute('p', '5'));
    const s = await page.evaluate(() => document.getElementById('zh').snapshot());
    expect(s.readouts.error_fro_rel_reason).toBe('not computed (the worker failed: injected failure)');
    expect((await words('zh')).msg).toBe('后台线程出错：injected failure');
    await page.close();
    await cors.close();
  });
  // Issue 29: the element's readout table is the page's (web/ui/readout-table.mjs); its copy showed a row's
  // reason only when the whole row was '—', so "— / 4.1" (retention's row entropy) hid why.
  it('an element shows the reason of a row that is partly undefined, as the page does', async () => {
    const cors = await serve(ROOT, 0, { headers: { 'Access-Control-Allow-Origin': '*' } });
    writeFileSync(join(hostDir, 'element-why.html'), `<!doctype html><meta charset="utf-8"><title>a post</title><link rel="icon" href="data:,">
<script type="module" src="${cors.url}embed.js"></script>
<attn-viz id="r" variant="retention" n="64" causal="1" view="readouts" style="width: 640px"></attn-viz>`);
    const page = await browser.context.newPage();
    await page.goto(`${host.url}element-why.html`);
    await page.waitForFunction(() => customElements.get('attn-viz'));
    const s = await page.evaluate(() => document.getElementById('r').snapshot());
    expect(s.readouts.row_entropy_mean).toBeNull();
    expect(s.readouts.row_entropy_uniform).not.toBeNull();
    const reason = s.readouts.row_entropy_mean_reason;
    expect(reason).toMatch(/negative entries/);
    const row = await page.evaluate(() => [...document.getElementById('r').shadowRoot.querySelectorAll('tr')]
      .map((tr) => tr.textContent).find((t) => t.startsWith('row entropy')));
    expect(row).toContain('—');
    expect(row).toContain(reason);
    await page.close();
    await cors.close();
  });
});
