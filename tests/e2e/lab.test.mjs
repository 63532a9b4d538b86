// The lab page end to end in Debian's headless Chromium: build/web (make web) served on 127.0.0.1.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { serve } from '../../scripts/serve.mjs';
import { launch, openLab, waitSettled, dragRange, rangeX, canvasColours, recordCanvasText, fontReport } from './browser.mjs';
import { loadAttnviz } from '../../web/wasm/attnviz.mjs';

const ROOT = 'build/web';
// the variants as the page's own module lists them (its registry): a new variant is checked here unedited
const REGISTRY = existsSync(`${ROOT}/attnviz.wasm`) ? (await loadAttnviz({ source: new URL(`../../${ROOT}/attnviz.wasm`, import.meta.url) })).registry : null;
const VARIANTS = REGISTRY?.variants.map((v) => v.name) ?? [];
const exact = (v) => REGISTRY.variants.find((r) => r.name === v).class === 'exact'; // softmax itself: M = A

let server, browser, page, errors, foreign;

beforeAll(async () => {
  if (!existsSync(`${ROOT}/index.html`) || !existsSync(`${ROOT}/attnviz.wasm`)) throw new Error('run `make web` first');
  server = await serve(ROOT, 0);
  browser = await launch();
  await recordCanvasText(browser.context);
  foreign = [];
  browser.context.on('request', (r) => { if (!r.url().startsWith(server.url) && !r.url().startsWith('data:') && !r.url().startsWith('blob:')) foreign.push(r.url()); });
  // `v=1`: the schema's defaults (Gaussian inputs, focused); a page opened without a link shows the first
  // lesson instead (tests/e2e/lessons.test.mjs)
  ({ page, errors } = await openLab(browser.context, server.url, { hash: 'v=1' }));
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const state = () => page.evaluate(() => window.attnviz.state);
const readouts = () => page.evaluate(() => ({ ...window.attnviz.view.readouts, ...window.attnviz.view.spec.readouts }));
/** The histogram's data (M's centre of mass as a fraction of ln n), its canvas and its note. */
const entropyHist = () => page.evaluate(() => {
  const h = window.attnviz.view.readouts.entropy_hist;
  const c = document.getElementById('ent-hist');
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  const set = new Set();
  let sum = 0;
  for (let i = 0; i < d.length; i += 4) { const v = (d[i] << 24 | d[i + 1] << 16 | d[i + 2] << 8 | d[i + 3]) >>> 0; set.add(v); sum = (sum * 31 + v) >>> 0; }
  const rows = h.M.counts.reduce((a, b) => a + b, 0);
  const centre = h.M.counts.reduce((a, k, i) => a + k * (i + 0.5), 0) / rows / h.bins;
  return { rows, centre, A: [...h.A.counts], colours: set.size, pixels: sum, note: document.getElementById('ent-note').textContent };
});
const cell = (id) => page.$eval(`tr[data-readout="${id}"] td.v`, (td) => td.textContent);

describe('the lab page', () => {
  it('loads with SIMD, draws, and serves the wasm as application/wasm', async () => {
    expect(await page.textContent('#engine')).toBe('wasm SIMD');
    const res = await page.request.get(`${server.url}attnviz.wasm`);
    expect(res.headers()['content-type']).toBe('application/wasm');
    expect((await canvasColours(page, 'hm-M')).colours).toBeGreaterThan(20);
    expect(errors).toEqual([]);
  });

  it('renders heatmaps and readouts for every variant', async () => {
    expect(await page.$$eval('#k-variant option', (os) => os.map((o) => o.value))).toEqual(VARIANTS);
    for (const v of VARIANTS) {
      await page.selectOption('#k-variant', v);
      await waitSettled(page);
      const st = await state();
      expect(st.variant).toBe(v);
      // M − A is one colour where M is A itself: softmax, and fox at its defaults (g = 0: causal softmax)
      const same = await page.evaluate(() => window.attnviz.view.frame.D.every((x) => x === 0));
      for (const id of ['hm-M', 'hm-A', 'hm-D']) {
        const c = await canvasColours(page, id);
        expect(c.width, `${v} ${id}`).toBe(256);
        if (!((exact(v) || same) && id === 'hm-D')) expect(c.colours, `${v} ${id}`).toBeGreaterThan(5);
      }
      if (same) expect(v === 'fox' || exact(v), v).toBe(true);
      const rank = await cell('rank');
      expect(rank, v).toMatch(/^\d+ \/ 256$/);
      expect(await cell('sparsity_lt_0.01'), v).toMatch(/%$/);
      expect(await cell('effective_rank'), v).toMatch(/^\d/);
      if (!exact(v)) expect(await cell('error_fro_rel'), v).toMatch(/^\d/);
      expect(await page.textContent('#cost')).toMatch(/quadratic/);
      expect(await page.evaluate(() => document.querySelectorAll('#formula .katex').length)).toBe(1);
    }
    expect(errors).toEqual([]);
  });

  it('dragging focused p from 1 to 6 with the mouse raises sparsity', async () => {
    await page.selectOption('#k-variant', 'focused');
    await page.focus('#k-p');
    await page.keyboard.press('Home');
    await waitSettled(page);
    expect((await state()).p).toBe(1);
    const before = await readouts();
    const histBefore = await entropyHist();
    await dragRange(page, '#k-p', 1, 6);
    await waitSettled(page);
    const p = (await state()).p;
    expect(p).toBeGreaterThan(5.6);
    expect(p).toBeLessThan(6.4);
    const after = await readouts();
    expect(after.sparsity_tau).toBeGreaterThan(before.sparsity_tau);
    expect(after.row_entropy_mean).toBeLessThan(before.row_entropy_mean);
    // the row-entropy histogram: drawn, and its mass moves to lower entropy (softmax's stays)
    const histAfter = await entropyHist();
    for (const h of [histBefore, histAfter]) {
      expect(h.colours).toBeGreaterThan(3);
      expect(h.rows).toBe(256);
      expect(h.note).toMatch(/uniform 5\.55 /); // no mask: the baseline is ln n
    }
    expect(histAfter.centre).toBeLessThan(histBefore.centre - 0.05);
    expect(histAfter.A).toEqual(histBefore.A);
    expect(histAfter.pixels).not.toBe(histBefore.pixels);
    expect(await page.textContent('#k-p-value')).toBe(String(p));
    expect(page.url()).toContain(`p=${p}`);
  });

  it("dragging Linformer's s makes the rank follow s", async () => {
    await page.selectOption('#k-variant', 'linformer');
    await waitSettled(page);
    for (const [a, b] of [[64, 20], [20, 150]]) {
      await dragRange(page, '#k-s', a, b, 8);
      await waitSettled(page);
      const { s } = await state();
      expect(Math.abs(s - b)).toBeLessThan(12);
      expect((await readouts()).rank).toBe(s);
      expect(await cell('rank')).toBe(`${s} / 256`);
    }
  });

  it('switches causal on and off', async () => {
    await page.selectOption('#k-variant', 'elu');
    await waitSettled(page);
    const offRank = (await readouts()).rank;
    expect(offRank).toBe(64);
    await page.click('label[for="k-causal"]');
    await waitSettled(page);
    expect((await state()).causal).toBe(true);
    const masked = await page.evaluate(() => { const f = window.attnviz.view.frame; return [f.M[f.size - 1], f.A[f.size - 1], f.M[0]]; });
    expect(masked[0]).toBe(0);
    expect(masked[1]).toBe(0);
    expect(masked[2]).toBeGreaterThan(0);
    expect((await readouts()).rank).toBeGreaterThan(200); // the causal mask makes a kernel map full rank
    await page.click('#k-causal');
    await waitSettled(page);
    expect((await state()).causal).toBe(false);
    expect((await readouts()).rank).toBe(offRank);
  });

  it('operates a slider by keyboard', async () => {
    await page.selectOption('#k-variant', 'focused');
    await waitSettled(page); // the knob panel is rebuilt for the variant: focus the new slider
    await page.focus('#k-p');
    await page.keyboard.press('Home');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowRight');
    await waitSettled(page);
    expect((await state()).p).toBeCloseTo(1.2, 10);
    expect(await page.textContent('#k-p-value')).toBe('1.2');
    await page.keyboard.press('End');
    await waitSettled(page);
    expect((await state()).p).toBe(10);
    await page.focus('#k-n');
    await page.keyboard.press('ArrowLeft');
    await waitSettled(page);
    expect((await state()).n).toBe(192);
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowRight');
    await waitSettled(page);
    expect((await state()).n).toBe(384);
    expect(await page.textContent('#ds-note')).toMatch(/blocks of 2×2/);
    await page.keyboard.press('ArrowLeft');
    await page.focus('#k-p');
    await page.keyboard.press('Home');
    for (let i = 0; i < 20; i++) await page.keyboard.press('ArrowRight');
    await waitSettled(page);
    expect((await state()).p).toBe(3);
    expect((await state()).n).toBe(256);
  });

  it('shows exact values on hover', async () => {
    const box = await page.locator('#hm-M').boundingBox();
    await page.mouse.move(box.x + box.width * 0.5 + 0.2, box.y + box.height * 0.25 + 0.2);
    const text = await page.textContent('#hover');
    const m = text.match(/^row (\d+), col (\d+): M ([0-9.e−-]+) · softmax ([0-9.e−-]+) · M − A/);
    expect(m, text).not.toBe(null);
    expect(Math.abs(Number(m[1]) - 64)).toBeLessThanOrEqual(1);
    expect(Math.abs(Number(m[2]) - 128)).toBeLessThanOrEqual(1);
  });

  it('restores a state from a link, reports bad parameters, and saves a screenshot', async () => {
    const p2 = await openLab(browser.context, server.url, { hash: 'v=1&variant=performer&m=64&bogus=<b>x</b>&n=128' });
    expect(await p2.page.evaluate(() => window.attnviz.state.m)).toBe(64);
    expect(await p2.page.textContent('#notice')).toContain('unknown parameter "bogus"');
    expect(await p2.page.evaluate(() => document.querySelectorAll('#notice b').length)).toBe(0);
    expect(p2.errors).toEqual([]);
    await p2.page.close();
    await mkdir('build/e2e', { recursive: true });
    await page.selectOption('#k-variant', 'focused');
    await waitSettled(page);
    await page.screenshot({ path: 'build/e2e/lab.png' });
    expect(await page.evaluate(() => document.documentElement.scrollHeight <= innerHeight + 1)).toBe(true);
    expect(errors).toEqual([]);
    expect(foreign).toEqual([]);
  });

  it("the screenshot's text is in a proportional font with a glyph for every character", async () => {
    // a machine without a sans-serif font with these glyphs (fonts-dejavu-core) sets the page in
    // Liberation Mono and draws σ, ‖, ◐ as empty boxes: scripts/deps.sh installs the fonts
    const r = await fontReport(page);
    const list = (a, f) => [...a.slice(0, 12).map(f), ...(a.length > 12 ? [`… and ${a.length - 12} more`] : [])];
    expect(r.items).toBeGreaterThan(100);
    expect(list(r.monoFallback, (m) => `"${m.text}" in ${m.platform} (CSS: ${m.family})`),
      'text set in a monospaced fallback font (make deps installs fonts-dejavu-core)').toEqual([]);
    expect(list(r.missing, (m) => `${m.code} ${m.char} in "${m.text}" (CSS: ${m.family})`),
      'characters without a glyph in any installed font, drawn as empty boxes (make deps installs fonts-dejavu-core, and fonts-dejavu-extra for the formulas)').toEqual([]);
    expect(Object.values(r.fonts).some((f) => !f.custom && !f.mono), JSON.stringify(r.fonts)).toBe(true);
  });
});

describe('fallbacks and large n', () => {
  it('n = 1024 shows the QKᵀ, exp(QKᵀ) and softmax curves beside the variant, and keeps them while dragging', async () => {
    const { page: p, errors: errs } = await openLab(browser.context, server.url, { hash: 'v=1&variant=focused&n=1024&d=64' });
    const curves = () => p.evaluate(() => {
      const u = window.attnviz.charts.spectrum.chart;
      return [1, 2, 3, 4].map((s) => u.data[s].filter((v) => v != null).length);
    });
    await p.waitForFunction(() => ['S', 'E', 'A'].every((k) => window.attnviz.view.overlay[k]?.sv.length === 1024), null, { timeout: 30000 });
    await waitSettled(p, 30000);
    const [S, E, M, A] = await curves();
    expect(S).toBeGreaterThan(30);   // QKᵀ: rank d = 64, its σ above the floor
    expect(E).toBeGreaterThan(100);
    expect(M).toBeGreaterThan(30);
    expect(A).toBeGreaterThan(100);
    await dragRange(p, '#k-p', 3, 5, 6);
    const during = await curves();
    expect(during.every((c) => c > 30)).toBe(true);
    await waitSettled(p, 30000);
    expect(errs).toEqual([]);
    await p.close();
  });

  it('n = 1024: the spectrum follows a drag faster than the frame worker', async () => {
    // an input every 16 ms: the spectrum job waits for the frame worker's answer to its request, which a
    // drag this fast never gives; an older request's answer lets it go once it has waited 120 ms. The drag
    // goes on until 6 spectra and 3 frames have come during it, however slow the machine (about 2.5 s here):
    // a spectrum that waited for the release would never reach 6, and the test fails at the cap.
    const { page: p, errors: errs } = await openLab(browser.context, server.url, { hash: 'v=1&variant=focused&n=1024&d=64' });
    await waitSettled(p, 60000);
    const r = await p.evaluate(async () => {
      const lab = window.attnviz, input = document.getElementById('k-p');
      input.dispatchEvent(new PointerEvent('pointerdown', { bubbles: true }));
      const first = lab.stats.seq + 1, t0 = performance.now();
      const count = () => {
        const last = lab.stats.seq;
        let spectra = 0, plain = 0;
        for (let s = first; s <= last; s++) { spectra += lab.stats.specAt.has(s); plain += lab.stats.plainAt.has(s); }
        return { inputs: last - first + 1, spectra, plain };
      };
      let i = 0, c = count();
      while ((c.spectra < 6 || c.plain < 3) && performance.now() - t0 < 45000) {
        input.value = String(2 + ((i++ * 0.37) % 6));
        input.dispatchEvent(new Event('input', { bubbles: true }));
        await new Promise((ok) => setTimeout(ok, 16));
        c = count();
      }
      input.dispatchEvent(new Event('change', { bubbles: true }));
      return c;
    });
    expect(r.spectra).toBeGreaterThanOrEqual(6); // 2 when it waited for the release (the first inputs)
    expect(r.plain).toBeGreaterThanOrEqual(3);
    await waitSettled(p, 60000);
    expect(await p.evaluate(() => document.querySelectorAll('#readout-table tr.stale').length)).toBe(0);
    expect(errs).toEqual([]);
    await p.close();
  }, 240_000);

  it('n = 512: the frame worker\'s cells, in arrays the page sends back and A sent once per input set, are the library\'s', async () => {
    // the page returns each replaced frame's M and D arrays to the frame worker, which fills them again, and
    // a frame whose A has not changed comes without it: after drags and a new seed, what the page holds must
    // be exactly the cells an Engine computes here from the page's own link (the same wasm, the same bits)
    const { page: p, errors: errs } = await openLab(browser.context, server.url, { hash: 'v=1&variant=focused&n=512&d=32' });
    const { Engine } = await import('../../web/compute/engine.mjs');
    const { buildSchema } = await import('../../web/state/state.mjs');
    const av = await loadAttnviz({ source: new URL(`../../${ROOT}/attnviz.wasm`, import.meta.url) });
    const schema = buildSchema(av.registry), engine = new Engine(av);
    const check = async (what) => {
      await waitSettled(p, 30000);
      const shown = await p.evaluate(() => {
        const f = window.attnviz.view.frame;
        return { hash: location.hash.slice(1), size: f.size, M: [...f.M], A: [...f.A], D: [...f.D] };
      });
      const want = engine.frame(schema.requestOf(schema.fromHash(shown.hash).state), { readouts: false });
      expect(shown.size, what).toBe(want.size);
      for (const k of ['M', 'A', 'D']) expect(shown[k].every((x, i) => Object.is(x, want[k][i])), `${what}: ${k}`).toBe(true);
    };
    await dragRange(p, '#k-p', 2, 6, 8);
    await check('after a drag of p');
    await p.evaluate(() => { location.hash = location.hash.replace(/seed=\d+/, '').replace(/$/, '&seed=7'); });
    await check('after a new seed');
    await dragRange(p, '#k-p', 5, 3, 6);
    await check('after a second drag');
    expect(errs).toEqual([]);
    await p.close();
  });

  it('loads the scalar build where the SIMD probe fails', async () => {
    const ctx = browser.context;
    const p = await ctx.newPage();
    await p.addInitScript(() => { WebAssembly.validate = () => false; });
    const errs = [];
    p.on('pageerror', (e) => errs.push(String(e)));
    const seen = [];
    p.on('request', (r) => seen.push(r.url()));
    await p.goto(`${server.url}#v=1&variant=elu&n=128`);
    await waitSettled(p);
    expect(await p.textContent('#engine')).toBe('wasm scalar');
    expect(seen.some((u) => u.endsWith('attnviz-scalar.wasm'))).toBe(true);
    expect(await p.evaluate(() => window.attnviz.view.spec.readouts.rank)).toBe(64);
    expect(errs).toEqual([]);
    await p.close();
  });

  it('n = 4096 computes in the worker without blocking input', async () => {
    const { page: p, errors: errs } = await openLab(browser.context, server.url, { hash: 'v=1&variant=focused&n=4096&d=64', timeout: 120000 }); // seconds of work: a loaded machine takes longer
    expect(await p.textContent('#ds-note')).toMatch(/n = 4096 shown as 256×256: blocks of 16×16/);
    // while the worker computes a drag (seconds at this n), the page answers within a frame or two:
    // the median of five frame turnarounds, all taken while the worker is still busy (one slow frame on
    // a loaded machine is not a blocked page; the n² work on this thread would take seconds per frame)
    await dragRange(p, '#k-p', 3, 5, 6);
    const r = await p.evaluate(async () => {
      const frame = () => new Promise((ok) => { const t0 = performance.now(); requestAnimationFrame(() => ok(performance.now() - t0)); });
      const times = [];
      let busy = true;
      for (let i = 0; i < 5; i++) { busy &&= !window.attnviz.idle; times.push(await frame()); }
      return { median: times.sort((a, b) => a - b)[2], busy };
    });
    expect(r.busy).toBe(true);
    expect(r.median).toBeLessThan(100);
    await waitSettled(p, 90000);
    expect(await p.evaluate(() => window.attnviz.view.frame.n)).toBe(4096);
    expect(await p.evaluate(() => window.attnviz.view.spec.readouts.rank)).toBe(64);
    expect(errs).toEqual([]);
    await p.close();
  }, 300000);

  it('above n = 1024 a drag shows quick frames, said on screen, and the full matrix on release', async () => {
    const { page: p, errors: errs } = await openLab(browser.context, server.url, { hash: 'v=1&variant=focused&n=2048&d=32' });
    await waitSettled(p, 90000);
    // hold the mouse down on p and move: the frames come from the factors (exact block means)
    const hold = async (sel, a, b) => {
      const p0 = await rangeX(p, sel, a), p1 = await rangeX(p, sel, b);
      await p.mouse.move(p0.x, p0.y);
      await p.mouse.down();
      for (let i = 1; i <= 6; i++) { await p.mouse.move(p0.x + ((p1.x - p0.x) * i) / 6, p0.y); await p.waitForTimeout(30); }
    };
    await hold('#k-p', 3, 5);
    await p.waitForFunction(() => window.attnviz.view.frame?.quick === 'factors', null, { timeout: 30000 });
    expect(await p.textContent('#ds-note')).toMatch(/from the factors L·Rᵀ while dragging \(exact\); readouts on release/);
    // readouts that wait longer than the grace (150 ms; here until the release) are dimmed, and only those
    await p.waitForFunction(() => document.querySelectorAll('#readout-table tr.stale').length > 0, null, { timeout: 30000 });
    expect(await p.evaluate(() => document.getElementById('ent-hist').classList.contains('stale'))).toBe(true);
    await p.mouse.up();
    await waitSettled(p, 90000);
    expect(await p.evaluate(() => document.querySelectorAll('#readout-table tr.stale').length)).toBe(0);
    expect(await p.evaluate(() => window.attnviz.view.frame.quick ?? null)).toBe(null);
    expect(await p.textContent('#ds-note')).toBe('n = 2048 shown as 256×256: blocks of 8×8, block mean');
    expect(await p.evaluate(() => window.attnviz.view.readouts.row_entropy_mean)).toBeGreaterThan(0);
    // softmax has no factors: a draft on every second token while dragging its scale
    await p.selectOption('#k-variant', 'softmax');
    await waitSettled(p, 90000);
    await hold('#k-scale', 0.1, 0.3);
    await p.waitForFunction(() => window.attnviz.view.frame?.quick === 'draft', null, { timeout: 30000 });
    expect(await p.textContent('#ds-note')).toMatch(/^draft while dragging: the variant on every second token \(1024 of 2048\)/);
    await p.mouse.up();
    await waitSettled(p, 90000);
    expect(await p.evaluate(() => window.attnviz.view.frame.quick ?? null)).toBe(null);
    expect(errs).toEqual([]);
    await p.close();
  });
});

describe('the first view', () => {
  it('draws its heatmaps before ICU starts and the charts\' module is asked for, then the charts, each within its box', async () => {
    // uPlot is imported on first need (web/render/charts.mjs): its module starts ICU, 40–100 ms that the
    // first heatmaps and readouts need not wait for (docs/performance.md, "A cold load")
    const p = await browser.context.newPage();
    const errs = [];
    p.on('pageerror', (e) => errs.push(String(e)));
    p.on('console', (m) => { if (m.type() === 'error') errs.push(m.text()); });
    await p.addInitScript(() => { // the page's first use of ICU: an Intl object, or a locale-aware method
      const seen = () => { window.intlFirstAt ??= performance.now(); };
      for (const name of Object.getOwnPropertyNames(Intl)) {
        const C = Intl[name];
        if (typeof C === 'function') Intl[name] = new Proxy(C, { construct: (t, a, nt) => (seen(), Reflect.construct(t, a, nt)), apply: (t, self, a) => (seen(), Reflect.apply(t, self, a)) });
      }
      for (const [proto, m] of [[Number.prototype, 'toLocaleString'], [Date.prototype, 'toLocaleString'], [String.prototype, 'localeCompare']]) {
        const f = proto[m];
        proto[m] = function (...a) { seen(); return f.apply(this, a); };
      }
    });
    await p.goto(`${server.url}#v=1&n=1024`);
    await waitSettled(p);
    const got = await p.evaluate(() => ({
      first: Math.min(...window.attnviz.stats.heatAt.values()),
      intl: window.intlFirstAt ?? null,
      chunks: performance.getEntriesByType('resource').filter((e) => /uPlot/.test(e.name)).map((e) => e.startTime),
      charts: !!window.attnviz.charts?.spectrum && !!window.attnviz.charts?.error,
      drawn: document.querySelectorAll('#chart-spectrum canvas, #chart-error canvas').length,
      // each chart with its legend within its box (made before the note above them took its final height)
      fits: ['chart-spectrum', 'chart-error'].map((id) => {
        const box = document.getElementById(id);
        return box.querySelector('.uplot').offsetHeight <= box.getBoundingClientRect().height + 1;
      }),
    }));
    expect(got.chunks.length).toBe(1); // its own chunk, not in the page's script
    expect(got.chunks[0]).toBeGreaterThanOrEqual(got.first);
    if (got.intl !== null) expect(got.intl).toBeGreaterThanOrEqual(got.first); // ICU starts after the first view
    expect(got.charts).toBe(true);
    expect(got.drawn).toBe(2);
    expect(got.fits).toEqual([true, true]);
    expect(errs).toEqual([]);
    await p.close();
  });
});
