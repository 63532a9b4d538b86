// The gated families in the page (issue 33; docs/page.md "Gates", docs/gated.md) in Debian's headless Chromium:
// every family of the registry's class `gated` renders (a heatmap with colour, readouts in the snapshot), the
// gate strip shows under the heatmaps with its resets where the link puts them (and under the zoom's columns),
// own gates.npy beside Q, K, V are read and a bad one is refused in one sentence with the view kept, and the
// strip is readable at 1024×768, in projector mode at 1920×1080, on a 390×844 phone, dark, and in Chinese.
// Screenshots: build/e2e/gated-*.png.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '../../scripts/serve.mjs';
import { launch, openLab, canvasColours, fontReport } from './browser.mjs';
import { loadAttnviz } from '../../web/wasm/attnviz.mjs';
import { npyBytes } from '../../web/io/export.mjs';

const ROOT = 'build/web';
const REGISTRY = existsSync(`${ROOT}/attnviz.wasm`) ? (await loadAttnviz({ source: new URL(`../../${ROOT}/attnviz.wasm`, import.meta.url) })).registry : null;
const GATED = REGISTRY?.variants.filter((v) => v.class === 'gated').map((v) => v.name) ?? [];
let server, browser, page, errors;

beforeAll(async () => {
  if (!existsSync(`${ROOT}/index.html`) || !existsSync(`${ROOT}/attnviz.wasm`)) throw new Error('run `make web` first');
  await mkdir('build/e2e', { recursive: true });
  server = await serve(ROOT, 0);
  browser = await launch({ width: 1024, height: 768 });
  ({ page, errors } = await openLab(browser.context, server.url, { hash: 'v=1' }));
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function at(hash, p = page) {
  await p.evaluate((h) => { location.hash = h; }, hash);
  return p.evaluate(() => window.attnviz.snapshot());
}
const strip = (p = page) => p.evaluate(() => ({
  hidden: document.getElementById('gate-strip').hidden,
  part: window.attnviz.panels().gates ?? null,
  say: document.querySelector('#gate-strip .gs-say').textContent,
  widths: ['hm-M', 'gate-strip'].map((id) => { const e = id === 'hm-M' ? document.getElementById(id) : document.querySelector('#gate-strip .gs-alpha'); const r = e.getBoundingClientRect(); return [Math.round(r.left), Math.round(r.width)]; }),
}));

describe('the gated families in the page', () => {
  it('the registry has the six families', () => {
    expect(GATED.sort()).toEqual(['dplr', 'fox', 'gdn', 'gla', 'kda', 'simple_gla']);
  });

  for (const v of GATED) {
    it(`${v} renders: a heatmap with colour, readouts in the snapshot, the strip with its gates`, async () => {
      const s = await at(`v=1&variant=${v}&n=128&d=16&gate=uniform&gate_lo=0.8&gate_hi=1`);
      expect(s.state.variant).toBe(v);
      expect(s.readouts.status.join(' ')).not.toMatch(/could not/);
      expect(s.readouts.rank).toBeGreaterThan(0);
      expect(s.readouts.semiseparable_rank).toBeGreaterThanOrEqual(0);
      expect((await canvasColours(page, 'hm-M')).colours).toBeGreaterThan(8);
      const perChannel = ['gla', 'kda', 'dplr'].includes(v);
      expect(s.gates).toMatchObject({ kind: 'uniform', channels: perChannel ? 16 : 1, n: 128, resets: [] });
      expect(Math.exp(s.gates.min)).toBeGreaterThanOrEqual(0.8 - 1e-6);
      expect(s.gates.max).toBeLessThanOrEqual(0);
      expect(s.gates.beta === null).toBe(!['gdn', 'kda'].includes(v));
      const st = await strip();
      expect(st.hidden).toBe(false);
      expect(st.part).toMatchObject({ columns: 128, image: perChannel, beta: ['gdn', 'kda'].includes(v) });
      expect(st.widths[1][0]).toBe(st.widths[0][0]); // under M's columns: the same left edge and width
      expect(Math.abs(st.widths[1][1] - st.widths[0][1])).toBeLessThanOrEqual(1);
      expect(errors).toEqual([]);
    });
  }

  it('shows no strip for a family without gates, and null gates in the snapshot', async () => {
    const s = await at('v=1&variant=elu&n=128&d=16');
    expect(s.gates).toBeNull();
    expect((await strip()).hidden).toBe(true);
  });

  it('puts the resets where the link says, and M falls apart at them', async () => {
    const s = await at('v=1&variant=gdn&n=128&d=16&gate=resets&decay=0.99&gate_period=0&gate_at=20,64,101');
    expect(s.gates.resets).toEqual([20, 64, 101]);
    expect(s.readouts.semiseparable_rank).toBe(0); // a reset at h = 64
    const st = await strip();
    expect(st.part.resetColumns).toEqual([20, 64, 101]);
    expect(st.say).toMatch(/▼ 3 resets: 20, 64, 101/);
    // hover a reset's column (n = 64: columns of 2 px or more, whatever pixel the pointer lands on): the line says
    // the token, α, η and the reset
    await at('v=1&variant=gdn&n=64&d=16&gate=resets&decay=0.99&gate_period=0&gate_at=20,32');
    const box = await page.$eval('#gate-strip .gs-alpha', (c) => { const r = c.getBoundingClientRect(); return { x: r.left, y: r.top, w: r.width, h: r.height }; });
    await page.mouse.move(box.x + ((32 + 0.5) / 64) * box.w, box.y + box.h - 2);
    expect((await strip()).say).toMatch(/^token 32: α = 9\.358e-14, η = 0\.5, reset at 32$/);
    await page.mouse.move(box.x + ((10 + 0.5) / 64) * box.w, box.y + box.h - 2);
    expect((await strip()).say).toMatch(/^token 10: α = 0\.99, η = 0\.5$/);
    // the zoom's window: the strip shows its columns
    const z = await at('v=1&variant=gdn&n=128&d=16&gate=resets&decay=0.99&gate_period=0&gate_at=20,64,101&zoom=50-90,50-90');
    expect(z.gates.resets).toEqual([20, 64, 101]);
    const zs = await strip();
    expect(zs.part).toMatchObject({ c0: 50, c1: 90, columns: 41, resetColumns: [14] });
    expect(errors).toEqual([]);
  });

  it('a per-channel family shows its channels as a small heatmap, with per-channel hover', async () => {
    await at('v=1&variant=kda&n=64&d=16&gate=slow&gate_lo=0.5&gate_hi=0.999&gate_wave=16&beta_gen=projection');
    expect((await canvasColours(page, 'gate-strip .gs-image')).colours).toBeGreaterThan(8);
    const box = await page.$eval('#gate-strip .gs-image', (c) => { const r = c.getBoundingClientRect(); return { x: r.left, y: r.top, w: r.width, h: r.height }; });
    await page.mouse.move(box.x + ((32 + 0.5) / 64) * box.w, box.y + 2);
    expect((await strip()).say).toMatch(/^token 32: .* in channel 0, η = /);
  });

  it("reads own gates.npy beside Q, K, V, and refuses a bad one in one sentence, keeping the view", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'attnviz-e2e-gates-'));
    const n = 32, d = 8, put = (name, data, shape) => { writeFileSync(join(dir, name), npyBytes(Float32Array.from(data), shape)); return join(dir, name); };
    const rnd = (len, s) => Array.from({ length: len }, (_, i) => Math.sin(i * 12.9898 + s) * 0.8);
    const qkv = [put('q.npy', rnd(n * d, 1), [n, d]), put('k.npy', rnd(n * d, 2), [n, d]), put('v.npy', rnd(n * d, 3), [n, d])];
    const g = Array.from({ length: n }, (_, t) => (t === 12 ? -30 : -0.05));
    await at('v=1&src=file&variant=gdn');
    await page.setInputFiles('#qkv-files', [...qkv, put('gates.npy', g, [n]), put('betas.npy', new Array(n).fill(0.9), [n])]);
    await page.waitForFunction(() => window.attnviz.state.n === 32 && window.attnviz.state.gate === 'file', null, { timeout: 20000 });
    const s = await page.evaluate(() => window.attnviz.snapshot());
    expect(s.state.gate).toBe('file');
    expect(s.state.beta_gen).toBe('file');
    expect(s.gates).toMatchObject({ kind: 'file', channels: 1, n: 32, resets: [12], min: -30 });
    expect(s.gates.beta.min).toBeCloseTo(0.9, 6);
    // a gate above 0: refused, one sentence, the view as it was
    const bad = g.slice(); bad[5] = 0.5;
    await page.setInputFiles('#qkv-files', [...qkv, put('gates.npy', bad, [n])]);
    await page.waitForSelector('#notice:not([hidden])');
    const said = await page.textContent('#notice');
    expect(said).toMatch(/gates\.npy: entry 5 is 0\.5, above 0: a log-gate g is ≤ 0/);
    expect(said.length).toBeLessThanOrEqual(200);
    expect(await page.evaluate(() => window.attnviz.snapshot())).toEqual(s);
    // a shape that does not fit Q
    // (another folder: a file input given the very same files again fires no change)
    const dir2 = mkdtempSync(join(tmpdir(), 'attnviz-e2e-gates-'));
    writeFileSync(join(dir2, 'gates.npy'), npyBytes(Float32Array.from(g.slice(0, 30)), [30]));
    await page.setInputFiles('#qkv-files', [...qkv, join(dir2, 'gates.npy')]);
    await page.waitForFunction(() => /shape \(30,\) is neither/.test(document.querySelector('#notice').textContent));
    expect(await page.evaluate(() => window.attnviz.snapshot())).toEqual(s);
  });

  it('a bad gate value in the link is said in one sentence and the rest kept', async () => {
    await page.evaluate(() => { location.hash = 'v=1&variant=gdn&n=64&d=16&gate=resets&gate_at=5,x&gate_rate=3'; });
    await page.waitForFunction(() => /gate_at: "x" are not token positions/.test(document.querySelector('#notice').textContent));
    const s = await page.evaluate(() => window.attnviz.snapshot());
    expect(s.state.gate_at).toBe('5');
    expect(s.state.gate_rate).toBe('1');
    expect(s.gates.resets).toContain(5); // (rate 1: every token t > 0 resets)
    // the positions' own box: typed, then Enter
    await page.evaluate(() => { location.hash = 'v=1&variant=gdn&n=64&d=16&gate=resets&gate_period=0'; });
    await page.evaluate(() => window.attnviz.snapshot());
    await page.fill('#k-gate_at', '30, 10, 30');
    await page.press('#k-gate_at', 'Enter');
    await page.waitForFunction(() => window.attnviz.state.gate_at === '10,30');
    expect((await page.evaluate(() => window.attnviz.snapshot())).gates.resets).toEqual([10, 30]);
    expect(await page.inputValue('#k-gate_at')).toBe('30, 10, 30'); // the reader's text stays while focused
  });
});

describe('the strip, readable everywhere', () => {
  const HASH = 'v=1&variant=kda&n=256&d=32&gate=resets&decay=0.99&gate_period=64&gate_at=40&beta_gen=uniform';
  const sizes = [
    ['1024', { width: 1024, height: 768 }, ''],
    ['projector-1920', { width: 1920, height: 1080 }, '&projector=1'],
    ['phone-390', { width: 390, height: 844, hasTouch: true }, ''],
    ['dark-1024', { width: 1024, height: 768, colorScheme: 'dark' }, ''],
    ['zh-1024', { width: 1024, height: 768 }, '&lang=zh'],
  ];
  for (const [name, opts, extra] of sizes) {
    it(name, async () => {
      const b = await launch(opts);
      try {
        const { page: p, errors: errs } = await openLab(b.context, server.url, { hash: HASH + extra });
        const st = await strip(p);
        expect(st.hidden).toBe(false);
        expect(st.widths[1][0]).toBe(st.widths[0][0]);
        // inside the window, nothing scrolls sideways, the text at least 11 px (18 px in projector mode)
        const geo = await p.evaluate(() => {
          const box = document.getElementById('gate-strip').getBoundingClientRect();
          const texts = [...document.querySelectorAll('#gate-strip .gs-lab, #gate-strip .gs-say')].map((e) => parseFloat(getComputedStyle(e).fontSize));
          return { right: box.right, width: document.documentElement.clientWidth, scroll: document.documentElement.scrollWidth, font: Math.min(...texts) };
        });
        expect(geo.right).toBeLessThanOrEqual(geo.width + 1);
        expect(geo.scroll).toBeLessThanOrEqual(geo.width);
        expect(geo.font).toBeGreaterThanOrEqual(extra.includes('projector') ? 18 : 11);
        if (extra.includes('zh')) expect(st.say).toMatch(/亮为门开/);
        expect((await fontReport(p, { root: '#gate-strip', canvas: false })).missing).toEqual([]);
        await p.locator('#gate-strip').scrollIntoViewIfNeeded();
        await p.screenshot({ path: `build/e2e/gated-${name}.png` });
        expect(errs).toEqual([]);
      } finally { await b.close(); }
    });
  }
});
