// The export menu (issue 10, item 3; web/ui/export-menu.mjs) in Debian's headless Chromium, as a reader
// uses it: open the header's menu, click, take the download. Every figure's SVG parses, names the variant
// in its caption and has its colour bar or legend; every PNG decodes, at twice the SVG's size, with the
// colour bar's top and bottom pixels the colour map's ends; M as .npy is the full n×n matrix (above the
// 384 tokens the heatmap shows as blocks) with the readouts' row sums; the JSON is the snapshot; the .zip
// holds Q, K, V, M, A, the random matrices and a numpy script that recomputes M (run when numpy is here).
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { existsSync, mkdtempSync, mkdirSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { serve } from '../../scripts/serve.mjs';
import { launch, openLab, exportItem, measureSvg as measure, svgTextProblems as textProblems, boxesMeet as meet } from './browser.mjs';
import { readNpy } from '../js/npy.mjs';

const ROOT = 'build/web';
let server, browser;

beforeAll(async () => {
  if (!existsSync(`${ROOT}/index.html`)) throw new Error('run `make web` first');
  server = await serve(ROOT, 0);
  browser = await launch({ width: 1280, height: 800 });
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const hasNumpy = (() => {
  try { execFileSync('/usr/bin/python3', ['-c', 'import numpy']); return true; } catch { return false; }
})();

const take = exportItem;

/** Parse an SVG in the page: {ok, rects, texts, paths, images, width, height}. */
function parseSvg(page, text) {
  return page.evaluate((t) => {
    const doc = new DOMParser().parseFromString(t, 'image/svg+xml');
    const root = doc.documentElement;
    return {
      ok: root.nodeName === 'svg' && !doc.querySelector('parsererror'),
      rects: doc.querySelectorAll('rect').length, paths: doc.querySelectorAll('path').length,
      images: doc.querySelectorAll('image').length, texts: [...doc.querySelectorAll('text')].map((x) => x.textContent),
      width: Number(root.getAttribute('width')), height: Number(root.getAttribute('height')),
    };
  }, text);
}

/** The first colour bar of a heatmap SVG (heatmapSvg: 256 rects 16 wide): its centre x and the y just inside its ends. */
function colourBar(svg) {
  const rects = [...svg.matchAll(/<rect x="([\d.]+)" y="([\d.]+)" width="16" height="([\d.]+)"/g)].slice(0, 256).map((m) => m.slice(1).map(Number));
  return { x: rects[0][0] + 8, top: rects[0][1] + 2, bottom: rects[255][1] + rects[255][2] - 2 };
}

/** Decode a PNG in the page: {width, height, px(x, y)} as RGBA arrays at the asked points. */
function decodePng(page, bytes, points) {
  return page.evaluate(async ({ b64, points: pts }) => {
    const bin = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const bmp = await createImageBitmap(new Blob([bin], { type: 'image/png' }));
    const c = new OffscreenCanvas(bmp.width, bmp.height);
    const ctx = c.getContext('2d');
    ctx.drawImage(bmp, 0, 0);
    return { width: bmp.width, height: bmp.height, px: pts.map(([x, y]) => [...ctx.getImageData(x, y, 1, 1).data]) };
  }, { b64: Buffer.from(bytes).toString('base64'), points });
}

describe('figures', () => {
  it('a heatmap as SVG and PNG: parses, decodes, the colour bar runs from the map\'s low end to its high end, the caption names the variant', async () => {
    const { page, errors } = await openLab(browser.context, server.url, { hash: 'variant=performer&n=128&d=16&m=64&gen=clustered' });
    const snap = await page.evaluate(() => window.attnviz.snapshot());
    const svg = await take(page, 'M.svg');
    expect(svg.name).toBe('attnviz-performer-n128-M.svg');
    const parsed = await parseSvg(page, svg.bytes.toString());
    expect(parsed.ok).toBe(true);
    expect(parsed.images).toBe(1);
    expect(parsed.rects).toBeGreaterThanOrEqual(256); // the colour bar's 256 steps, vectors
    const caption = parsed.texts.at(-1);
    expect(caption).toMatch(/^Performer FAVOR\+ \(m = 64, iid, feature seed 0.*\) · clustered seed 1, n = 128, d = 16/);
    expect(parsed.texts[0]).toMatch(/attention matrix M/);

    const png = await take(page, 'M.png');
    expect([...png.bytes.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    // the colour bar where the SVG draws it (SVG units), the PNG at 2×
    const bar = colourBar(svg.bytes.toString());
    const img = await decodePng(page, png.bytes, [[2 * bar.x, 2 * bar.top], [2 * bar.x, 2 * bar.bottom], [2 * 240, 2 * 220]]);
    expect(img.width).toBe(2 * parsed.width);
    expect(img.height).toBe(2 * parsed.height);
    const near = (a, b) => a.slice(0, 3).every((v, i) => Math.abs(v - b[i]) <= 6);
    expect(near(img.px[0], [253, 231, 37])).toBe(true);  // viridis' top
    expect(near(img.px[1], [68, 1, 84])).toBe(true);     // viridis' bottom
    expect(near(img.px[2], [255, 255, 255])).toBe(false); // the heatmap is drawn
    expect(snap.state.variant).toBe('performer');
    expect(errors).toEqual([]);
    await page.close();
  });

  it('the spectrum, the error curve and the entropy histogram as SVG and PNG; the difference heatmap takes the diverging map', async () => {
    const { page, errors } = await openLab(browser.context, server.url, { hash: 'variant=elu&n=96&d=16&cmap=cividis' });
    for (const fig of ['spectrum', 'error', 'entropy']) {
      const svg = await take(page, `${fig}.svg`);
      const parsed = await parseSvg(page, svg.bytes.toString());
      expect(parsed.ok, fig).toBe(true);
      expect(parsed.texts.at(-1), fig).toMatch(/^linear, φ = elu\+1 · Gaussian seed 1, n = 96, d = 16/);
      if (fig === 'spectrum') {
        // the variant and the three overlays, each a path with its label, and a legend naming them
        for (const name of ['QKᵀ', 'exp(QKᵀ)', 'variant M', 'softmax A']) expect(parsed.texts, name).toContain(name);
        expect(parsed.paths).toBeGreaterThanOrEqual(4);
      }
      const png = await take(page, `${fig}.png`);
      const img = await decodePng(page, png.bytes, [[0, 0]]);
      expect(img.width, fig).toBe(2 * parsed.width);
      expect(img.px[0].slice(0, 3), fig).toEqual([255, 255, 255]);
    }
    const bar = colourBar((await take(page, 'D.svg')).bytes.toString());
    const d = await take(page, 'D.png');
    const img = await decodePng(page, d.bytes, [[2 * bar.x, 2 * bar.top], [2 * bar.x, 2 * bar.bottom]]);
    // the diverging map's ends: red-ish at the top, blue-ish at the bottom (never the sequential cividis)
    expect(img.px[0][0]).toBeGreaterThan(img.px[0][2]);
    expect(img.px[1][2]).toBeGreaterThan(img.px[1][0]);
    const m = await take(page, 'M.png');
    const mi = await decodePng(page, m.bytes, [[2 * bar.x, 2 * bar.top]]);
    expect(mi.px[0][2]).toBeLessThan(120); // cividis' top is yellow (low blue), as the page shows it
    expect(errors).toEqual([]);
    await page.close();
  });

  it('offers the sweep only when one is shown, and exports it with its band', async () => {
    const { page } = await openLab(browser.context, server.url, { hash: 'variant=performer&n=64&d=16&sweep=m&sweep_seeds=2' });
    await page.evaluate(() => window.attnviz.sweep());
    await page.click('#export > summary');
    // the menu syncs its offer on <details>' toggle event, a task after the click: wait for it
    const offered = (shown) => page.waitForFunction((s) => document.querySelector('#export').open
      && document.querySelector('tr[data-figure="sweep"]').hidden === !s, shown, { timeout: 5000 });
    await offered(true);
    const svg = await take(page, 'sweep.svg');
    const parsed = await parseSvg(page, svg.bytes.toString());
    expect(parsed.ok).toBe(true);
    expect(svg.bytes.toString()).toMatch(/<polygon points=/); // the min–max band over the seeds
    expect(textProblems(await measure(page, svg.bytes.toString()))).toEqual([]);
    await page.evaluate(() => { location.hash = 'variant=elu&n=64&d=16'; });
    // the hashchange event comes after this evaluate returns: wait until the snapshot shows the new view
    // (a snapshot() taken at once could settle on the old one, about 1 run in 8 on a busy machine)
    await expect.poll(() => page.evaluate(async () => (await window.attnviz.snapshot()).state.variant), { timeout: 20000 }).toBe('elu');
    await page.click('#export > summary'); // closes
    await page.click('#export > summary'); // opens again: the offer follows the view
    await offered(false);
    await page.close();
  });
});

describe('figures for a post (issue 32, item 7)', () => {
  // looked at: build/e2e/export-*.png
  mkdirSync('build/e2e', { recursive: true });

  it('M | A | M − A as one figure: three heatmaps with their labels, ticks and colour bars; the same bytes twice', async () => {
    const { page, errors } = await openLab(browser.context, server.url, { hash: 'variant=elu&n=96&d=16&gen=clustered' });
    const svg = await take(page, 'trio.svg');
    expect(svg.name).toBe('attnviz-elu-n96-trio.svg');
    const text = svg.bytes.toString();
    const parsed = await parseSvg(page, text);
    expect(parsed.ok).toBe(true);
    expect(parsed.images).toBe(3);
    expect(parsed.rects).toBeGreaterThanOrEqual(3 * 256);
    const m = await measure(page, text);
    const of = (cls) => m.texts.filter((t) => t.cls === cls).map((t) => t.text);
    expect(of('title')).toEqual(['linear, φ = elu+1: M, softmax A and M − A']);
    expect(of('panel')).toEqual(['linear, φ = elu+1: matrix M', 'softmax A (same Q, K, scale, mask)', 'difference M − A']);
    expect(of('caption')).toEqual([expect.stringMatching(/^linear, φ = elu\+1 · clustered seed 1, n = 96, d = 16/)]);
    expect(of('tick')).toEqual(Array(6).fill(['0', '20', '40', '60', '80']).flat());
    const bars = of('bar');
    expect(bars.filter((b) => /^≥ /.test(b)).length).toBe(3);
    expect(bars).toContain('0');
    expect(textProblems(m)).toEqual([]);
    // deterministic: the same view gives the same bytes
    expect((await take(page, 'trio.svg')).bytes.equals(svg.bytes)).toBe(true);
    const png = await take(page, 'trio.png');
    expect((await take(page, 'trio.png')).bytes.equals(png.bytes)).toBe(true);
    const img = await decodePng(page, png.bytes, [[0, 0]]);
    expect([img.width, img.height]).toEqual([2 * parsed.width, 2 * parsed.height]);
    writeFileSync('build/e2e/export-trio.png', png.bytes);
    expect(errors).toEqual([]);
    await page.close();
  });

  // the views: a low-rank variant with its rank ceiling, a zoom, blocks above 384 tokens, Chinese
  const VIEWS = [
    ['elu', 'variant=elu&n=96&d=16&gen=clustered'],
    ['performer', 'variant=performer&n=128&d=16&m=8&gen=clustered'],
    ['relu', 'variant=relu&n=64&d=8&gen=lowrank&seed=3'],
    ['blocks', 'variant=relu&n=512&d=16'],
    ['zoom', 'variant=focused&n=128&d=16&zoom=10-41,60-91'],
    ['zh', 'variant=focused&p=3&n=64&d=16&gen=clustered&lang=zh'],
  ];
  for (const [name, hash] of VIEWS) {
    it(`${name}: every figure's text is text (no TeX), inside the figure, and no two labels overlap; guide labels off the markers, the means off the ticks`, async () => {
      const { page, errors } = await openLab(browser.context, server.url, { hash });
      const seen = {};
      for (const fig of ['M', 'D', 'trio', 'spectrum', 'error', 'entropy']) {
        const m = await measure(page, (await take(page, `${fig}.svg`)).bytes.toString());
        expect(textProblems(m), `${name} ${fig}`).toEqual([]);
        seen[fig] = m;
        if (fig === 'spectrum' || fig === 'error') {
          for (const g of m.texts.filter((t) => t.cls === 'guide')) {
            expect(m.markers.filter((b) => meet(b, g, 0)), `${name} ${fig}: "${g.text}" on a marker`).toEqual([]);
          }
        }
        if (fig === 'entropy') {
          expect(m.means.length, name).toBeGreaterThan(0);
          for (const mean of m.means) for (const t of m.texts) expect(meet(mean, t, 0), `${name}: a mean on "${t.text}"`).toBe(false);
        }
      }
      // a heatmap's axes have values: the indices (round numbers), or the zoom's window's
      const ticks = seen.M.texts.filter((t) => t.cls === 'tick').map((t) => Number(t.text));
      expect(ticks.length, name).toBeGreaterThanOrEqual(6);
      for (const v of ticks) expect(v % 5 === 0 || v % 2 === 0 || v === 1, `${name}: ${v}`).toBe(true);
      if (name === 'zoom') expect(Math.min(...ticks)).toBeGreaterThanOrEqual(10);
      if (name === 'blocks') expect(Math.max(...ticks)).toBeGreaterThan(384);
      if (name === 'elu' || name === 'zh') {
        writeFileSync(`build/e2e/export-spectrum-${name}.png`, (await take(page, 'spectrum.png')).bytes);
        writeFileSync(`build/e2e/export-entropy-${name}.png`, (await take(page, 'entropy.png')).bytes);
        writeFileSync(`build/e2e/export-error-${name}.png`, (await take(page, 'error.png')).bytes);
        writeFileSync(`build/e2e/export-M-${name}.png`, (await take(page, 'M.png')).bytes);
      }
      if (name === 'zh') {
        expect(seen.trio.texts.filter((t) => t.cls === 'title').map((t) => t.text)).toEqual(['FLatten（聚焦线性注意力）：M、softmax A 与 M − A']);
        writeFileSync('build/e2e/export-trio-zh.png', (await take(page, 'trio.png')).bytes);
      }
      expect(errors).toEqual([]);
      await page.close();
    });
  }
});

describe('data', () => {
  it('M as .npy is the whole matrix at n = 512 (the heatmap shows blocks), and CSV parses to the same floats', async () => {
    const { page, errors } = await openLab(browser.context, server.url, { hash: 'variant=relu&n=512&d=16' });
    const snap = await page.evaluate(() => window.attnviz.snapshot());
    expect(await page.evaluate(() => window.attnviz.view.frame.b)).toBeGreaterThan(1);
    const npy = await take(page, 'M.npy');
    expect(npy.name).toBe('attnviz-relu-n512-M.npy');
    const M = readNpy(npy.path);
    expect(M.shape).toEqual([512, 512]);
    let dev = 0;
    for (let i = 0; i < 512; i++) {
      let s = 0;
      for (let j = 0; j < 512; j++) s += M.data[i * 512 + j];
      dev = Math.max(dev, Math.abs(s - 1));
    }
    // the page's readout of the largest |row sum − 1| is this matrix's
    expect(dev).toBeCloseTo(snap.readouts.row_sum_dev_max, 6);
    const csv = await take(page, 'M.csv');
    const rows = csv.bytes.toString().trim().split('\n');
    expect(rows.length).toBe(512);
    const first = rows[0].split(',').map(Number);
    expect(first.length).toBe(512);
    for (let j = 0; j < 512; j++) expect(Math.fround(first[j])).toBe(M.data[j]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('readouts and state as JSON are the snapshot', async () => {
    const { page } = await openLab(browser.context, server.url, { hash: 'preset=rank-le-d' });
    const snap = await page.evaluate(() => window.attnviz.snapshot());
    const json = JSON.parse((await take(page, 'state.json')).bytes.toString());
    expect(json.state).toEqual(snap.state);
    expect(json.state).toMatchObject({ src: 'synthetic', layer: '0', head: '0' }); // every key of the state
    expect(json.readouts).toEqual(JSON.parse(JSON.stringify(snap.readouts)));
    expect(json.generated_by).toBe('attnviz');
    await page.close();
  });

  it('the .zip holds Q, K, V, M, A, Linformer\'s E and F, and a script that recomputes M', async () => {
    const { page } = await openLab(browser.context, server.url, { hash: 'variant=linformer&n=64&d=16&s=12&gen=clustered' });
    const zip = await take(page, 'bundle.zip');
    expect(zip.name).toBe('attnviz-linformer-n64-export.zip');
    const dir = mkdtempSync(join(tmpdir(), 'attnviz-zip-'));
    const listing = execFileSync('/usr/bin/python3', ['-c', `
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
assert z.testzip() is None
z.extractall(sys.argv[2])
print("\\n".join(z.namelist()))`, zip.path, dir]).toString().trim().split('\n');
    const base = 'attnviz-linformer-n64-export/';
    for (const w of ['Q', 'K', 'V', 'M', 'A', 'E', 'F']) expect(listing).toContain(`${base}attnviz-linformer-n64-${w}.npy`);
    expect(listing).toContain(`${base}recompute.py`);
    expect(listing).toContain(`${base}README.txt`);
    expect(readNpy(join(dir, `${base}attnviz-linformer-n64-E.npy`)).shape).toEqual([12, 64]);
    if (hasNumpy) {
      const out = execFileSync('/usr/bin/python3', [join(dir, base, 'recompute.py')]).toString();
      expect(Number(/max \|numpy - exported M\| = (\S+)/.exec(out)[1])).toBeLessThan(1e-4);
    } else {
      console.log('SKIPPED: running recompute.py: /usr/bin/python3 has no numpy');
    }
    await page.close();
  });

  it('the .zip of a gated family holds its gates as it read them, and recompute.py reads them', async () => {
    const { page, errors } = await openLab(browser.context, server.url, { hash: 'variant=gdn&n=48&d=8&decay=0.9&gate=resets&gate_at=12,30&beta=1.5&gen=clustered' });
    const zip = await take(page, 'bundle.zip');
    expect(zip.name).toBe('attnviz-gdn-n48-export.zip');
    const dir = mkdtempSync(join(tmpdir(), 'attnviz-zip-'));
    execFileSync('/usr/bin/python3', ['-c', 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])', zip.path, dir]);
    const base = join(dir, 'attnviz-gdn-n48-export');
    const gates = readNpy(join(base, 'attnviz-gdn-n48-gates.npy')), betas = readNpy(join(base, 'attnviz-gdn-n48-betas.npy'));
    expect(gates.shape).toEqual([48]);
    expect(betas.shape).toEqual([48]);
    // the resets where the link put them, the open gate elsewhere; the constant β (the library's own case) written out
    expect([...gates.data.keys()].filter((t) => gates.data[t] === -30)).toEqual([12, 30]);
    expect(new Set(gates.data.filter((x) => x !== -30))).toEqual(new Set([Math.fround(Math.log(0.9))]));
    expect([...new Set(betas.data)]).toEqual([1.5]);
    expect(readFileSync(join(base, 'README.txt'), 'utf8')).toMatch(/gates +48 +the log-gates/);
    if (hasNumpy) {
      const out = execFileSync('/usr/bin/python3', [join(base, 'recompute.py')]).toString();
      expect(Number(/max \|numpy - exported M\| = (\S+)/.exec(out)[1])).toBeLessThan(1e-4);
    }
    expect(errors).toEqual([]);
    await page.close();
  });

  it('a failed export says why and keeps the view', async () => {
    const { page } = await openLab(browser.context, server.url, { hash: 'variant=elu&n=64&d=16' });
    const before = await page.evaluate(() => window.attnviz.snapshot());
    // the sweep is not shown: ask for it anyway (a stale click), the page says so
    await page.click('#export > summary');
    await page.$eval('tr[data-figure="sweep"]', (tr) => { tr.hidden = false; });
    await page.click('[data-export="sweep.svg"]');
    await page.waitForSelector('#notice:not([hidden])');
    expect(await page.textContent('#notice')).toMatch(/export sweep\.svg: no sweep is shown/);
    expect(await page.evaluate(() => window.attnviz.snapshot())).toEqual(before);
    await page.close();
  });
});
