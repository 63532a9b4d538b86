// Issue 32, item 3: one <attn-viz> element must not freeze another, and an element redraws while its
// slider is dragged. A host page on another origin holds element A (a heatmap, n = 64) and element B
// (n = 1024, then 2048): A's update is timed while B computes. Each element has its own worker
// (web/embed.mjs), so A's update no longer waits for B's job; with the one shared worker it did (1.8 s at
// n = 1024, 4.9 s at 2048). The figures are printed (the lead's report); the test asserts a ratio, not
// milliseconds: A's update under a third of B's job time measured in the same run, which holds with a wide
// margin on a slow shared 2-core machine (measured: see the commit) and fails with a shared worker, where
// A's update is most of B's job.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync, mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '../../scripts/serve.mjs';
import { launch } from './browser.mjs';

const ROOT = 'build/web';
let cors, host, hostDir, browser;

beforeAll(async () => {
  if (!existsSync(`${ROOT}/embed.js`)) throw new Error('run `make web` first');
  cors = await serve(ROOT, 0, { headers: { 'Access-Control-Allow-Origin': '*' } });
  hostDir = mkdtempSync(join(tmpdir(), 'attnviz-host-'));
  host = await serve(hostDir, 0);
  browser = await launch({ width: 900, height: 900 });
});

afterAll(async () => {
  await browser?.close();
  await cors?.close();
  await host?.close();
  if (hostDir) rmSync(hostDir, { recursive: true, force: true });
});

/** A host page with `body` after the element's module script; opened, errors collected. */
async function hostPage(name, body) {
  writeFileSync(join(hostDir, name), `<!doctype html><meta charset="utf-8"><title>a post</title><link rel="icon" href="data:,">
<script type="module" src="${cors.url}embed.js"></script>
${body}`);
  const page = await browser.context.newPage();
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${host.url}${name}`);
  await page.waitForFunction(() => customElements.get('attn-viz'));
  return { page, errors };
}

describe('two <attn-viz> elements on one page', () => {
  it('a heatmap updates while the other element computes n = 1024 and 2048, in a fraction of that job', async () => {
    const { page, errors } = await hostPage('two.html', `
<attn-viz id="a" variant="focused" n="64" p="2" view="heatmap"></attn-viz>
<attn-viz id="b" variant="elu" n="64" view="spectrum"></attn-viz>`);
    await page.evaluate(() => Promise.all(['a', 'b'].map((id) => document.getElementById(id).snapshot())));
    // A alone: the time from an attribute change to its settled view
    const updateA = (p) => page.evaluate(async (p) => {
      const a = document.getElementById('a');
      const t0 = performance.now();
      a.setAttribute('p', String(p));
      await a.snapshot();
      return performance.now() - t0;
    }, p);
    const alone = [];
    for (const p of [3, 4, 5]) alone.push(await updateA(p));
    const figures = { alone: alone.map((x) => Math.round(x)) };
    let p = 6;
    for (const n of [1024, 2048]) {
      // B starts its job; A changes once B's worker has surely begun (100 ms later), and again after
      const r = await page.evaluate(async ({ n, p }) => {
        const a = document.getElementById('a'), b = document.getElementById('b');
        const t0 = performance.now();
        b.setAttribute('n', String(n));
        const bDone = b.snapshot().then(() => performance.now() - t0);
        await new Promise((resolve) => setTimeout(resolve, 100));
        const t1 = performance.now();
        a.setAttribute('p', String(p));
        await a.snapshot();
        const aMs = performance.now() - t1;
        const aDuring = !b.view.done || b.view.done < b.view.job; // B was still computing when A had settled
        return { aMs, bMs: await bDone, aDuring };
      }, { n, p });
      p = p === 6 ? 3 : 6;
      figures[n] = { A: Math.round(r.aMs), B: Math.round(r.bMs), during: r.aDuring };
      expect(r.aDuring, `n = ${n}: B had finished before A did (A ${r.aMs} ms, B ${r.bMs} ms)`).toBe(true);
      expect(r.aMs, `n = ${n}: A ${r.aMs} ms while B computed for ${r.bMs} ms`).toBeLessThan(r.bMs / 3);
    }
    console.log('two-element latency (ms):', JSON.stringify(figures));
    expect(errors).toEqual([]);
    await page.close();
  });

  it('redraws while its slider is dragged: each input event asks for a frame, latest wins, no queue builds up', async () => {
    const { page, errors } = await hostPage('drag.html', `
<attn-viz id="a" variant="focused" n="64" p="2" view="heatmap" controls="p"></attn-viz>
<attn-viz id="big" variant="focused" n="768" p="2" view="heatmap" controls="p"></attn-viz>`);
    await page.evaluate(() => Promise.all(['a', 'big'].map((id) => document.getElementById(id).snapshot())));
    // input events only (a drag before its release): each value is drawn, and the attribute follows
    const input = (id, v) => page.evaluate(([id, v]) => {
      const i = document.getElementById(id).shadowRoot.getElementById('k-p');
      i.value = String(v); i.dispatchEvent(new Event('input'));
    }, [id, v]);
    const drawn = [];
    for (const p of [3, 4, 5]) {
      await input('a', p);
      await page.waitForFunction((p) => {
        const a = document.getElementById('a');
        return a.getAttribute('p') === String(p) && a.view.frame?.id === a.view.job && a.view.done === a.view.job;
      }, p, { timeout: 10000 });
      drawn.push(await page.evaluate(() => document.getElementById('a').view.frames));
    }
    expect(drawn[1]).toBeGreaterThan(drawn[0]);
    expect(drawn[2]).toBeGreaterThan(drawn[1]);
    expect((await page.evaluate(() => document.getElementById('a').snapshot())).state.p).toBe('5');
    // a fast drag at n = 768: 20 input events in one go; the worker computes the newest, not all 20
    const before = await page.evaluate(() => ({ job: document.getElementById('big').view.job, frames: document.getElementById('big').view.frames }));
    await page.evaluate(async () => {
      const i = document.getElementById('big').shadowRoot.getElementById('k-p');
      for (let k = 0; k < 20; k++) { i.value = String(2 + (k % 2 ? 0.5 : 0) + k / 10); i.dispatchEvent(new Event('input')); await Promise.resolve(); }
    });
    const s = await page.evaluate(() => document.getElementById('big').snapshot());
    const after = await page.evaluate(() => ({ job: document.getElementById('big').view.job, frames: document.getElementById('big').view.frames }));
    console.log('fast drag at n = 768:', after.job - before.job, 'requests,', after.frames - before.frames, 'frames computed and drawn');
    expect(after.job - before.job).toBeGreaterThan(5);
    expect(after.frames - before.frames).toBeLessThan((after.job - before.job) / 2);
    expect(s.state.p).toBe(await page.evaluate(() => document.getElementById('big').getAttribute('p')));
    expect(errors).toEqual([]);
    await page.close();
  });

  it('an element off screen and idle ends its worker, and starts one again when it has to compute', async () => {
    const { page, errors } = await hostPage('park.html', `
<attn-viz id="a" variant="elu" n="64" view="heatmap"></attn-viz>
<div style="height: 3000px"></div>
<attn-viz id="far" variant="focused" n="64" p="2" view="readouts"></attn-viz>`);
    await page.evaluate(() => { customElements.get('attn-viz').parkMs = 300; });
    await page.evaluate(() => document.getElementById('a').snapshot());
    await page.evaluate(() => document.getElementById('far').scrollIntoView());
    await page.waitForFunction(() => document.getElementById('far').view.done > 0);
    const before = await page.evaluate(() => document.getElementById('far').snapshot());
    await expect.poll(() => page.workers().length).toBe(1); // a, off screen now, has ended its worker
    // back at the top: far ends its worker too; a, on screen again with nothing new to compute, starts none
    await page.evaluate(() => scrollTo(0, 0));
    await expect.poll(() => page.workers().length).toBe(0);
    // a's figure stays drawn; a change while on screen starts a worker again
    expect(await page.evaluate(() => document.getElementById('a').view.frames)).toBe(1);
    await page.evaluate(() => document.getElementById('a').setAttribute('n', '32'));
    expect((await page.evaluate(() => document.getElementById('a').snapshot())).state.n).toBe('32');
    expect(page.workers().length).toBe(1);
    // far, changed while off screen, computes once scrolled to, in a new worker: the same numbers
    await page.evaluate(() => { const f = document.getElementById('far'); f.setAttribute('p', '3'); f.setAttribute('p', '2'); f.scrollIntoView(); });
    const after = await page.evaluate(() => document.getElementById('far').snapshot());
    expect(after).toEqual(before);
    expect(errors).toEqual([]);
    await page.close();
  });
});
